import Foundation

/// Errand's fault endpoints, not part of httpbin: `GET /fault/{kind}` answers the way a broken or
/// hostile server does, for reliability tests. ``TestServer``'s documentation lists the kinds.
///
/// Every fault that could last forever — headers that never end, an endless body — stops when
/// the client hangs up, when the server stops, or after ``endlessLimit`` at the latest, so a
/// client that never gives up costs one thread for a bounded time.
enum FaultRoutes {
    static let all: [Route] = [
        Route(["GET", "POST"], "/fault/{kind}", handler: fault)
    ]

    /// The longest any fault keeps its connection.
    static let endlessLimit: TimeInterval = 30

    private static let faults: [String: @Sendable (RouteContext) -> HTTPResponse] = [
        "reset": { _ in .raw { _ in .reset } },
        "reset-mid-body": resetMidBody,
        "truncated": truncated,
        "closed-when-idle": closedWhenIdle,
        "chunked-cut": chunkedCut,
        "endless-headers": endlessHeaders,
        "garbage": garbage,
        "bad-gzip": badGzip,
        "many-headers": manyHeaders,
        "invalid-utf8": invalidUTF8,
        "deep-json": deepJSON,
        "endless-body": endlessBody,
        "redirect-loop": redirectLoop,
    ]

    private static func fault(_ context: RouteContext) -> HTTPResponse {
        guard let kind = context.parameters["kind"], let fault = faults[kind] else { return .notFound }
        return fault(context)
    }

    /// The value of the whole-number query parameter `name` when it is at least `minimum`.
    private static func number(_ name: String, in context: RouteContext, minimum: Int = 0) -> Int? {
        context.request.queryItems.last { $0.name == name }.flatMap { Int($0.value) }.flatMap {
            $0 >= minimum ? $0 : nil
        }
    }

    /// A 302 to itself. With `n=K`, to itself with `n=K+1` and the other query items kept; with
    /// `mint=NAME` too, the next URL also carries `NAME=minted-<K+1>`, a value the client never
    /// sent, as a sign-in server hands out a token in a redirect.
    private static func redirectLoop(_ context: RouteContext) -> HTTPResponse {
        guard let hop = number("n", in: context) else {
            return HTTPResponse(status: 302, headers: [HTTPHeader("Location", "/fault/redirect-loop")])
        }
        let query = context.request.queryItems
        let minted = query.last { $0.name == "mint" }?.value
        var items = [(name: "n", value: "\(hop + 1)")] + query.filter { $0.name != "n" && $0.name != minted }
        if let minted { items.append((minted, "minted-\(hop + 1)")) }
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&=+")
        let next = items.map { item in
            [item.name, item.value].map { $0.addingPercentEncoding(withAllowedCharacters: allowed) ?? "" }
                .joined(separator: "=")
        }
        return HTTPResponse(
            status: 302, headers: [HTTPHeader("Location", "/fault/redirect-loop?" + next.joined(separator: "&"))])
    }

    /// A head announcing 1,000,000 bytes, 64 KiB of them, a pause (`pause_ms`, default 100) so the
    /// client has read them, then a reset.
    private static func resetMidBody(_ context: RouteContext) -> HTTPResponse {
        let pause = Double(number("pause_ms", in: context) ?? 100) / 1000
        return .raw { connection in
            let head = "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: 1000000\r\n\r\n"
            guard connection.write(head), connection.write(Data(count: 64 * 1024)) else { return .close }
            connection.sleep(seconds: pause)
            return .reset
        }
    }

    /// `Content-Length: 1000`, 500 bytes, then an orderly close.
    private static func truncated(_ context: RouteContext) -> HTTPResponse {
        .raw { connection in
            _ =
                connection.write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n")
                && connection.write(Data(repeating: UInt8(ascii: " "), count: 500))
            return .close
        }
    }

    /// A whole answer that lets the client keep the connection, then an orderly close: the
    /// connection a client keeps for its next request is gone by the time it needs it.
    private static func closedWhenIdle(_ context: RouteContext) -> HTTPResponse {
        .raw { connection in
            _ = connection.write("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\nok\n")
            return .close
        }
    }

    /// A chunked body of two chunks, then an orderly close where the last, empty chunk should be.
    private static func chunkedCut(_ context: RouteContext) -> HTTPResponse {
        .raw { connection in
            _ = connection.write(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + "6\r\n{\"a\": \r\n" + "2\r\n1}\r\n")
            return .close
        }
    }

    /// A status line and one header, then nothing more until the client gives up; with
    /// `trickle_ms=N`, one more header field every N ms instead, so bytes keep arriving. With
    /// `hold_s=S` (at most 600), the silent kind waits S seconds rather than ``endlessLimit``.
    private static func endlessHeaders(_ context: RouteContext) -> HTTPResponse {
        let trickle = number("trickle_ms", in: context, minimum: 1)
        let hold = number("hold_s", in: context, minimum: 1).map { TimeInterval(min($0, 600)) } ?? endlessLimit
        return .raw { connection in
            guard connection.write("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n") else { return .close }
            guard let trickle else {
                connection.waitForClient(atMost: hold)
                return .close
            }
            let deadline = Date(timeIntervalSinceNow: endlessLimit)
            var line = 0
            while Date() < deadline, connection.write("X-Trickle-\(line): \(line)\r\n") {
                line += 1
                connection.sleep(seconds: Double(trickle) / 1000)
            }
            return .close
        }
    }

    /// Bytes that are not HTTP at all, then an orderly close.
    private static func garbage(_ context: RouteContext) -> HTTPResponse {
        .raw { connection in
            _ = connection.write(Data("\u{1}\u{2}this is not HTTP\r\n\r\n".utf8) + Data((0...255).map { UInt8($0) }))
            return .close
        }
    }

    /// `Content-Encoding: gzip` on a body that starts like gzip and then is not.
    private static func badGzip(_ context: RouteContext) -> HTTPResponse {
        let body = Data([0x1F, 0x8B, 0x08, 0, 0, 0, 0, 0, 0, 0xFF]) + Data("this is not deflate data".utf8)
        return HTTPResponse(
            status: 200,
            headers: [HTTPHeader("Content-Type", "application/json"), HTTPHeader("Content-Encoding", "gzip")],
            body: body)
    }

    /// `count` (default 10,000, at most 100,000) header fields `X-Fault-{i}: {i}`, and a JSON body
    /// `{"headers": count}`.
    private static func manyHeaders(_ context: RouteContext) -> HTTPResponse {
        let count = min(number("count", in: context) ?? 10_000, 100_000)
        var response = HTTPResponse.json(["headers": count])
        response.headers += (0..<count).map { HTTPHeader("X-Fault-\($0)", "\($0)") }
        return response
    }

    /// A JSON document labelled UTF-8 whose one string holds bytes that are not UTF-8.
    private static func invalidUTF8(_ context: RouteContext) -> HTTPResponse {
        let body = Data(#"{"name": ""#.utf8) + Data([0xFF, 0xFE, 0xC3, 0x28]) + Data(#""}"#.utf8)
        return HTTPResponse(
            status: 200, headers: [HTTPHeader("Content-Type", "application/json; charset=utf-8")], body: body)
    }

    /// `depth` (default 100,000, at most 10,000,000) nested JSON arrays: `[[[…]]]`.
    private static func deepJSON(_ context: RouteContext) -> HTTPResponse {
        let depth = min(number("depth", in: context) ?? 100_000, 10_000_000)
        let body = Data(repeating: UInt8(ascii: "["), count: depth) + Data(repeating: UInt8(ascii: "]"), count: depth)
        return HTTPResponse(status: 200, headers: [HTTPHeader("Content-Type", "application/json")], body: body)
    }

    /// A chunked body of 64 KiB chunks that never ends: until the client hangs up, the server
    /// stops or ``endlessLimit`` passes.
    private static func endlessBody(_ context: RouteContext) -> HTTPResponse {
        .raw { connection in
            let head = "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
            let chunk = Data("10000\r\n".utf8) + Data(repeating: UInt8(ascii: "x"), count: 0x10000) + Data("\r\n".utf8)
            let deadline = Date(timeIntervalSinceNow: endlessLimit)
            guard connection.write(head) else { return .close }
            while Date() < deadline, connection.write(chunk) {}
            return .close
        }
    }
}
