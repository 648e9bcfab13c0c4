import Foundation

/// The servers of the HTTP client conformance suite of Apple's swift-http-api-proposal, under
/// `/conformance/`: each answer written byte for byte as the suite's raw server or its test
/// server sends it, so that a client's tests here are the suite's cases. ``TestServer``'s
/// documentation lists them.
enum ConformanceRoutes {
    static let all: [Route] = [
        Route(.any, "/conformance/request", streamsBody: true, handler: request),
        Route(.any, "/conformance/echo", streamsBody: true, handler: echo),
        Route(.any, "/conformance/speak", streamsBody: true, handler: speak),
        Route(.any, "/conformance/{name}", handler: answer),
    ]

    private static let answers: [String: @Sendable (RouteContext) -> HTTPResponse] = [
        "not_http": { _ in raw("FOOBAR") },
        "http_case": { _ in raw("Http/1.1 200 OK\r\nConnection: close\r\n\r\n") },
        "no_reason": { _ in raw("HTTP/1.1 200\r\nConnection: close\r\n\r\n") },
        "204_with_cl": { _ in raw("HTTP/1.1 204 No Content\r\nContent-Length: 1000\r\nConnection: close\r\n\r\n") },
        "304_with_cl": { _ in raw("HTTP/1.1 304 Not Modified\r\nContent-Length: 1000\r\nConnection: close\r\n\r\n") },
        "incomplete_body": { _ in raw("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nConnection: close\r\n\r\n1234") },
        "no_length_hint": { _ in raw("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n1234") },
        "conflicting_cl": { _ in raw("HTTP/1.1 200 OK\r\nContent-Length: 10, 4\r\nConnection: close\r\n\r\n1234") },
        "200": { _ in HTTPResponse(status: 200) },
        "404": { _ in HTTPResponse(status: 404) },
        "999": { _ in HTTPResponse(status: 999) },
        "head_with_cl": headWithLength,
        "gzip": { encoded($0, as: "gzip", bytes: gzipTest) },
        "deflate": { encoded($0, as: "deflate", bytes: deflateTest) },
        "brotli": { encoded($0, as: "br", bytes: brotliTest) },
        "identity": { _ in HTTPResponse(status: 200, body: Data("TEST\n".utf8)) },
        "header_multivalue": { _ in
            HTTPResponse(status: 200, headers: [HTTPHeader("X-Test", "one"), HTTPHeader("X-Test", "two")])
        },
        "redirect_ping": { _ in redirect(301, to: "/conformance/redirect_pong") },
        "redirect_pong": { _ in redirect(301, to: "/conformance/redirect_ping") },
        "301": { _ in redirect(301, to: "/conformance/request") },
        "308": { _ in redirect(308, to: "/conformance/request") },
        "1mb_body": { _ in HTTPResponse(status: 200, body: Data(repeating: UInt8(ascii: "A"), count: 1_000_000)) },
        "cookie": { _ in
            HTTPResponse(status: 200, headers: [HTTPHeader("Set-Cookie", "foo=\(UUID().uuidString)")])
        },
        "etag": etag,
        "trailers": trailers,
        "stall": stall,
        "stall_body": stallBody,
    ]

    private static func answer(_ context: RouteContext) -> HTTPResponse {
        guard let name = context.parameters["name"], let answer = answers[name] else {
            return .text("Unknown path", status: 500)
        }
        return answer(context)
    }

    /// `text` as the whole answer, then an orderly close.
    private static func raw(_ text: String) -> HTTPResponse {
        .raw { connection in
            _ = connection.write(text)
            return .close
        }
    }

    private static func redirect(_ status: Int, to location: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: [HTTPHeader("Location", location)])
    }

    /// A JSON description of the request: `params` (each query item's values), `headers` (each
    /// field's values, as sent), `body` (as UTF-8), `method`, and `trailers` (the chunked body's
    /// trailer fields).
    private static func request(_ context: RouteContext) -> HTTPResponse {
        var body = Data()
        while let piece = context.body?.next() { body.append(piece) }
        func grouped(_ pairs: [(String, String)]) -> [String: [String]] {
            pairs.reduce(into: [:]) { $0[$1.0, default: []].append($1.1) }
        }
        return .json([
            "params": grouped(context.request.queryItems.map { ($0.name, $0.value) }),
            "headers": grouped(context.request.headers.map { ($0.name, $0.value) }),
            "body": String(decoding: body, as: UTF8.self),
            "method": context.request.method,
            "trailers": grouped((context.body?.trailers ?? []).map { ($0.name, $0.value) }),
        ])
    }

    /// `200` with `Content-Length: 1000` and no body to a `HEAD`; `405` to anything else.
    private static func headWithLength(_ context: RouteContext) -> HTTPResponse {
        guard context.request.method == "HEAD" else { return HTTPResponse(status: 405) }
        return .raw { connection in
            _ = connection.write("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nConnection: close\r\n\r\n")
            return .close
        }
    }

    /// `TEST\n` in `coding` when the request's `Accept-Encoding` names it, else as it is.
    private static func encoded(_ context: RouteContext, as coding: String, bytes: [UInt8]) -> HTTPResponse {
        let accepted = context.request.headers.first("Accept-Encoding") ?? ""
        guard accepted.contains(coding) else { return HTTPResponse(status: 200, body: Data("TEST\n".utf8)) }
        return HTTPResponse(status: 200, headers: [HTTPHeader("Content-Encoding", coding)], body: Data(bytes))
    }

    /// `TEST\n` gzipped, zlib-deflated and brotli-compressed.
    private static let gzipTest: [UInt8] = [
        0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x0B, 0x71, 0x0D, 0x0E, 0xE1, 0x02, 0x00, 0xBE,
        0xD7, 0x83, 0xF7, 0x05, 0x00, 0x00, 0x00,
    ]
    private static let deflateTest: [UInt8] = [
        0x78, 0x9C, 0x0B, 0x71, 0x0D, 0x0E, 0xE1, 0x02, 0x00, 0x04, 0x68, 0x01, 0x4B,
    ]
    private static let brotliTest: [UInt8] = [0x0B, 0x02, 0x80, 0x54, 0x45, 0x53, 0x54, 0x0A, 0x03]

    /// A counter from 0, sent as the `ETag` and the body with `Cached: false`; a request whose
    /// `If-None-Match` is the counter gets `304` with `Cached: true`, and the counter moves on.
    private static func etag(_ context: RouteContext) -> HTTPResponse {
        let sent = context.request.headers.first("If-None-Match")
        let (tag, isNotModified) = context.server.conformanceETag.next(matching: sent)
        guard isNotModified else {
            return HTTPResponse(
                status: 200, headers: [HTTPHeader("ETag", tag), HTTPHeader("Cached", "false")], body: Data(tag.utf8))
        }
        return HTTPResponse(status: 304, headers: [HTTPHeader("ETag", tag), HTTPHeader("Cached", "true")])
    }

    /// `Response body`, chunked, then the trailer fields `X-Trailer-One: first-value`,
    /// `X-Trailer-Two: second-value` and `X-Checksum: abc123`.
    private static func trailers(_ context: RouteContext) -> HTTPResponse {
        .raw { connection in
            _ = connection.write(
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nd\r\nResponse body\r\n0\r\n"
                    + "X-Trailer-One: first-value\r\nX-Trailer-Two: second-value\r\nX-Checksum: abc123\r\n\r\n")
            // Kept open, as a kept-alive connection would be: the body ends by its framing.
            connection.waitForClient(atMost: 5)
            return .close
        }
    }

    /// No answer until the client hangs up.
    private static func stall(_ context: RouteContext) -> HTTPResponse {
        .raw { connection in
            connection.waitForClient(atMost: 3600)
            return .close
        }
    }

    /// A chunked head and 1000 bytes of `A`, then nothing more until the client hangs up.
    private static func stallBody(_ context: RouteContext) -> HTTPResponse {
        .raw { connection in
            let chunk = String(repeating: "A", count: 1000)
            _ = connection.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3e8\r\n\(chunk)\r\n")
            connection.waitForClient(atMost: 3600)
            return .close
        }
    }

    /// The request body back as it arrives, each piece a chunk written at once, while the rest
    /// is still being read: a client that waits for an echo before it sends more gets one.
    private static func echo(_ context: RouteContext) -> HTTPResponse {
        guard context.request.method == "POST" else { return .text("Incorrect method", status: 405) }
        guard let body = context.body, let connection = context.connection else { return HTTPResponse(status: 500) }
        guard connection.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n") else {
            return .raw { _ in .close }
        }
        while let piece = body.next() {
            guard connection.write(chunk(piece)) else { return .raw { _ in .close } }
        }
        _ = connection.write("0\r\n\r\n")
        return .raw { _ in .close }
    }

    /// A thousand one-byte chunks of `A`, each written only once some of the request body came
    /// since the last, then the end of the response — while the request body may still go on.
    private static func speak(_ context: RouteContext) -> HTTPResponse {
        guard let body = context.body, let connection = context.connection else { return HTTPResponse(status: 500) }
        guard connection.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n") else {
            return .raw { _ in .close }
        }
        for _ in 0..<1000 {
            guard connection.write(chunk(Data("A".utf8))), body.next() != nil else { return .raw { _ in .close } }
        }
        _ = connection.write("0\r\n\r\n")
        return .raw { _ in .close }
    }

    private static func chunk(_ piece: Data) -> Data {
        Data((String(piece.count, radix: 16) + "\r\n").utf8) + piece + Data("\r\n".utf8)
    }
}
