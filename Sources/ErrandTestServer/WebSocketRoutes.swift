import Errand
import Foundation

/// WebSocket endpoints (RFC 6455) for tests, examples and benchmarks:
/// - `GET /ws/echo`: answers each text or binary message with the same message, unfragmented,
///   each ping with its pong, and a close frame with the same code; the query shapes it:
///   - `send=N`: first sends `message 1` … `message N`;
///   - `close=CODE&reason=TEXT`: closes with CODE as soon as the socket is open;
///   - `drop=1`: drops the connection, without a close frame, after the first message;
///   - `pongs=0`: never answers a ping; with `stray_pongs=1`, answers each with an empty pong
///     instead, which answers no ping that carried a payload, then a text message `stray pong`;
///   - `masked=1`: sends a masked text frame, which a server must never do;
///   - `trickle=N`: sends one binary message of N bytes, written 4 KiB at a time;
///   - `flood=N&size=S`: sends N binary messages of S bytes (default 65536) as fast as the client
///     takes them, then `flood done`; ``TestServer/webSocketFloodBlocked()`` says whether and
///     when the client made it wait; compressed when deflate was agreed, which the handshake then
///     agrees with `server_no_context_takeover`;
///   - `ticks=N&tick_ms=M`: sends N text messages of 64 bytes, M ms apart (default 100), then echoes;
///   - `tag=LABEL`: echoes each message with `LABEL|` before it, so that a client holding many
///     sockets can tell which connection the server read a message from;
///   - `status=CODE`: answers the handshake with CODE and a small text body instead of 101;
///   - `auth=1`: answers 401, as `/auth/protected` does, unless the handshake carries a valid
///     `Authorization: Bearer` access token;
///   - `deflate=0`: declines permessage-deflate, which it otherwise accepts when offered (with
///     the default windows and context takeover) and then uses both ways;
///   - `protocol=NAME` / `extensions=VALUE` / `accept=VALUE`: these header fields of the 101 as
///     given, to answer with what the client did not offer; by default the first subprotocol
///     offered is chosen and no extension;
///   - `set_cookie=VALUE` (repeatable): a `Set-Cookie: VALUE` field in the 101 for each, as a
///     load balancer pins a socket's later reconnects with a cookie.
///
/// - `GET /ws/quotes?count=N&drop_at=K&interval_ms=I`: a live quote feed. After the client's
///   `{"subscribe":["AAPL",…],"after":S}` it sends `{"seq":n,"symbol":…,"price":…}` for n = S+1 … N
///   (default 12), one every I ms (default 20), cycling through the symbols; a connection that
///   starts before quote K drops, without a close frame, once quote K went out; after quote N it
///   closes with 1000 "feed over". Nothing is compressed.
enum WebSocketRoutes {
    static let all: [Route] = [
        Route(["GET"], "/ws/echo", handler: echo), Route(["GET"], "/ws/quotes", handler: quotes),
    ]

    /// What the feed's client sends first.
    private struct Subscription: Decodable {
        let subscribe: [String]
        let after: Int?
    }

    private static func quotes(_ context: RouteContext) -> HTTPResponse {
        guard let key = context.request.headers.first("Sec-WebSocket-Key") else {
            return .text("a WebSocket handshake needs a Sec-WebSocket-Key\n", status: 400)
        }
        let count = (context.queryInteger("count", in: 0...1_000_000) ?? nil) ?? 12
        let dropAt = context.queryInteger("drop_at", in: 1...1_000_000) ?? nil
        let interval = Double((context.queryInteger("interval_ms", in: 0...60_000) ?? nil) ?? 20) / 1000
        let wire =
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: \(WebSocketPeer.acceptValue(for: key))\r\n\r\n"
        return .raw { connection in
            guard connection.write(wire) else { return .close }
            var peer = WebSocketPeer(connection: connection, script: WebSocketPeer.Script())
            guard let first = peer.nextMessage(),
                let subscription = try? JSONDecoder().decode(Subscription.self, from: Data(first.payload)),
                !subscription.subscribe.isEmpty
            else {
                _ = peer.send(opcode: 0x8, WebSocketPeer.closePayload(1008, "subscribe first"))
                return .close
            }
            let start = subscription.after ?? 0
            for sequence in stride(from: start + 1, through: count, by: 1) {
                let symbol = subscription.subscribe[sequence % subscription.subscribe.count]
                let price = 100 + Double((sequence * 37 + symbol.utf8.count * 11) % 200) / 10
                let quote = #"{"seq":\#(sequence),"symbol":"\#(symbol)","price":\#(price)}"#
                guard peer.send(opcode: 0x1, Array(quote.utf8)) else { return .close }
                if let dropAt, start < dropAt, sequence == dropAt { return .reset }
                connection.sleep(seconds: interval)
            }
            guard peer.send(opcode: 0x8, WebSocketPeer.closePayload(1000, "feed over")) else { return .close }
            while peer.nextMessage() != nil {}
            return .close
        }
    }

    private static func echo(_ context: RouteContext) -> HTTPResponse {
        let request = context.request
        if let status = context.queryInteger("status", in: 100...599), let status {
            return .text("refused with \(status)\n", status: status)
        }
        if context.query("auth") == "1" {
            guard let token = PipelineRoutes.bearerToken(request), context.server.pipeline.checkAccessToken(token)
            else {
                return .json(["error": "invalid_token"], status: 401)
            }
        }
        guard request.headers.first("Upgrade")?.lowercased() == "websocket",
            request.headers.first("Sec-WebSocket-Version") == "13",
            let key = request.headers.first("Sec-WebSocket-Key")
        else {
            return .text("a WebSocket handshake needs Upgrade, Sec-WebSocket-Version: 13 and a key\n", status: 400)
        }
        var head = [
            "HTTP/1.1 101 Switching Protocols", "Upgrade: websocket", "Connection: Upgrade",
            "Sec-WebSocket-Accept: \(context.query("accept") ?? WebSocketPeer.acceptValue(for: key))",
        ]
        let offered = request.headers.first("Sec-WebSocket-Protocol")?.split(separator: ",").first
        if let chosen = context.query("protocol") ?? offered.map({ $0.trimmingCharacters(in: .whitespaces) }) {
            head.append("Sec-WebSocket-Protocol: \(chosen)")
        }
        let offersDeflate = request.headers.first("Sec-WebSocket-Extensions")?.contains("permessage-deflate") == true
        let compresses = offersDeflate && context.query("deflate") != "0" && context.query("extensions") == nil
        // A flood sends one compressed frame again and again: the server can keep no context.
        let deflate =
            context.query("flood") == nil ? "permessage-deflate" : "permessage-deflate; server_no_context_takeover"
        if let extensions = context.query("extensions") ?? (compresses ? deflate : nil) {
            head.append("Sec-WebSocket-Extensions: \(extensions)")
        }
        for item in request.queryItems where item.name == "set_cookie" {
            head.append("Set-Cookie: \(item.value)")
        }
        let script = WebSocketPeer.Script(
            greetings: (context.queryInteger("send", in: 0...1_000_000) ?? nil) ?? 0,
            closeCode: (context.queryInteger("close", in: 0...65535) ?? nil).map { UInt16($0) },
            closeReason: context.query("reason") ?? "",
            dropsAfterFirstMessage: context.query("drop") == "1",
            echoTag: context.query("tag").map { Array(($0 + "|").utf8) } ?? [],
            answersPings: context.query("pongs") != "0", sendsStrayPongs: context.query("stray_pongs") == "1",
            compresses: compresses,
            sendsMaskedFrame: context.query("masked") == "1",
            trickledSize: context.queryInteger("trickle", in: 0...(1 << 30)) ?? nil,
            flood: (context.queryInteger("flood", in: 0...100_000_000) ?? nil).map {
                ($0, (context.queryInteger("size", in: 0...(16 << 20)) ?? nil) ?? 65536)
            },
            ticks: (context.queryInteger("ticks", in: 0...1_000_000) ?? nil).map {
                ($0, (context.queryInteger("tick_ms", in: 0...60_000) ?? nil) ?? 100)
            })
        let wire = head.joined(separator: "\r\n") + "\r\n\r\n"
        return .raw { connection in
            guard connection.write(wire) else { return .close }
            var peer = WebSocketPeer(connection: connection, script: script)
            peer.run()
            return .close
        }
    }
}
