import Foundation

/// Errand's framing endpoints, not part of httpbin: `GET /framing/{kind}` answers with an HTTP/1.1
/// message that is valid, or nearly, but framed in a way some clients cannot take — the inputs
/// by which a server or the network made FoundationNetworking (URLSession on Linux) end the
/// process. ``TestServer``'s documentation lists the kinds.
enum FramingFaultRoutes {
    static let all: [Route] = [
        Route(["GET", "POST"], "/framing/{kind}", handler: framing)
    ]

    /// The body every kind that has one sends: `{"framing": "<kind>"}`.
    private static func body(of kind: String) -> String {
        #"{"framing": "\#(kind)"}"#
    }

    /// `Content-Length: 9223372036854775807`, the largest a client can hold in 64 bits.
    private static let hugeContentLength: Int64 = .max

    private static let kinds: [String: @Sendable (RouteContext) -> HTTPResponse] = [
        "trailers": trailers,
        "head-cut": headCut,
        "huge-content-length": hugeLength,
        "no-reason": noReason,
        "interim": interim,
    ]

    private static func framing(_ context: RouteContext) -> HTTPResponse {
        guard let kind = context.parameters["kind"], let answer = kinds[kind] else { return .notFound }
        return answer(context)
    }

    /// A chunked JSON body followed by two trailer fields, `X-Checksum` and `X-Trailer` (both
    /// announced in `Trailer`), on a kept-alive connection. `status=C` (200–599) answers C instead.
    private static func trailers(_ context: RouteContext) -> HTTPResponse {
        let status = context.request.queryItems.last { $0.name == "status" }.flatMap { Int($0.value) } ?? 200
        guard (200...599).contains(status) else { return .text("status must be 200–599\n", status: 400) }
        let body = body(of: "trailers")
        let head =
            "HTTP/1.1 \(status) Trailers\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
            + "Trailer: X-Checksum, X-Trailer\r\n\r\n"
        let chunks = String(body.utf8.count, radix: 16) + "\r\n" + body + "\r\n0\r\n"
        let trailer = "X-Checksum: \(Checksum(Data(body.utf8)).hexDigits)\r\nX-Trailer: end\r\n\r\n"
        return .raw { connection in
            _ = connection.write(head + chunks + trailer)
            // Kept open a moment, as a kept-alive connection would be, so the client ends the
            // body by its framing, not by the close.
            connection.waitForClient(atMost: 1)
            return .close
        }
    }

    /// A status line and `fields=N` header fields (default 0, at most 100), then an orderly close
    /// before the blank line that ends the head: a server, or a proxy, that went away mid-head.
    /// With `interim=1`, a whole `103 Early Hints` head comes first.
    private static func headCut(_ context: RouteContext) -> HTTPResponse {
        let query = context.request.queryItems
        let fields = min(query.last { $0.name == "fields" }.flatMap { Int($0.value) }.map { max($0, 0) } ?? 0, 100)
        let interim = query.last { $0.name == "interim" }?.value == "1"
        let early = interim ? "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n" : ""
        let head = "HTTP/1.1 200 OK\r\n" + (0..<fields).map { "X-Field-\($0): \($0)\r\n" }.joined()
        return .raw { connection in
            _ = connection.write(early + head)
            return .close
        }
    }

    /// A head declaring ``hugeContentLength`` body bytes, the JSON body, then an orderly close.
    private static func hugeLength(_ context: RouteContext) -> HTTPResponse {
        let body = body(of: "huge-content-length")
        return .raw { connection in
            _ = connection.write(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(hugeContentLength)\r\n\r\n"
                    + body)
            return .close
        }
    }

    /// `HTTP/1.1 200` with no reason phrase, nor the space before one, and the JSON body: curl
    /// and browsers take such a status line.
    private static func noReason(_ context: RouteContext) -> HTTPResponse {
        let body = body(of: "no-reason")
        return .raw { connection in
            _ = connection.write(
                "HTTP/1.1 200\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body)
            return .close
        }
    }

    /// An interim head for each of `codes` (comma-separated, 100–199 but 101; default `103`),
    /// each with `Link: </style-N.css>; rel=preload`, then `200` and the JSON body.
    private static func interim(_ context: RouteContext) -> HTTPResponse {
        let codes = (context.query("codes") ?? "103").split(separator: ",").compactMap { Int($0) }
        guard !codes.isEmpty, codes.count <= 100, codes.allSatisfy({ (100...199).contains($0) && $0 != 101 }) else {
            return .text("codes must be 1 to 100 interim statuses, 100–199 but 101\n", status: 400)
        }
        let interim = codes.enumerated().map { index, code in
            "HTTP/1.1 \(code) \(HTTPResponse.reasonPhrase(for: code))\r\nLink: </style-\(index).css>; rel=preload\r\n\r\n"
        }
        let body = body(of: "interim")
        return .raw { connection in
            _ = connection.write(
                interim.joined() + "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                    + "\(body.utf8.count)\r\n\r\n" + body)
            return .close
        }
    }
}
