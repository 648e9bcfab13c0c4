import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// WebSocket servers that misbehave, for reliability tests: `GET /ws/fault/{kind}`.
/// - `stall`: accepts the handshake (no extension), then never reads a byte, its receive buffer
///   shrunk, so that what the client sends soon fills the connection;
/// - `refused-chunked`: `403` with a chunked body, then keeps the connection open;
/// - `refused-empty?status=S`: `S` (204 or 304, default 204) with no body, as HTTP says, then
///   keeps the connection open;
/// - `refused-length`: `403` with a `Content-Length` body, then keeps the connection open;
/// - `refused-unframed`: `403` with a body framed by neither, which ends only with the
///   connection, which it keeps open;
/// - `endless-head`: the start of a `101` head, then 1 KiB header lines as fast as the client
///   reads them, never the blank line that ends a head.
/// Each keeps its connection until the client hangs up, the server stops, or `hold_s` seconds
/// (default 30, at most 600) pass.
enum WebSocketFaultRoutes {
    static let all: [Route] = [Route(["GET"], "/ws/fault/{kind}", handler: fault)]

    private static func fault(_ context: RouteContext) -> HTTPResponse {
        let hold = TimeInterval((context.queryInteger("hold_s", in: 1...600) ?? nil) ?? 30)
        switch context.parameters["kind"] {
        case "stall":
            guard let key = context.request.headers.first("Sec-WebSocket-Key") else { return .notFound }
            return .raw { connection in
                let head =
                    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Accept: \(WebSocketPeer.acceptValue(for: key))\r\n\r\n"
                guard connection.write(head) else { return .close }
                var size: Int32 = 4096
                setsockopt(connection.descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
                connection.sleep(seconds: hold)
                return .reset
            }
        case "refused-chunked":
            return held(
                "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + "a\r\nforbidden \r\n5\r\nhere\n\r\n0\r\n\r\n", hold: hold)
        case "refused-empty":
            let status = context.query("status") == "304" ? "304 Not Modified" : "204 No Content"
            return held("HTTP/1.1 \(status)\r\nETag: \"v1\"\r\n\r\n", hold: hold)
        case "refused-length":
            return held(
                "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: 15\r\n\r\nforbidden here\n",
                hold: hold)
        case "refused-unframed":
            return held("HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n\r\nforbidden", hold: hold)
        case "endless-head":
            return .raw { connection in
                guard connection.write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n") else {
                    return .close
                }
                let filler = String(repeating: "x", count: 1000)
                let deadline = Date(timeIntervalSinceNow: hold)
                var line = 0
                while Date() < deadline, connection.write("X-Filler-\(line): \(filler)\r\n") { line += 1 }
                return .close
            }
        default:
            return .notFound
        }
    }

    /// Writes `wire` as the whole answer, then keeps the connection until the client hangs up.
    private static func held(_ wire: String, hold: TimeInterval) -> HTTPResponse {
        .raw { connection in
            guard connection.write(wire) else { return .close }
            connection.waitForClient(atMost: hold)
            return .close
        }
    }
}
