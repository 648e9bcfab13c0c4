import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A WebSocket that URLSession opened (`URLSessionWebSocketTask`), seen as the byte stream a
/// ``WebSocket`` reads and writes: the messages URLSession receives become the frames a server
/// would send, and the frames the socket writes become URLSession's messages, pings and close.
/// ``URLSessionTransport`` uses it on Apple platforms; on Linux, where FoundationNetworking's
/// libcurl has no WebSocket support, sockets go through libcurl instead and this is only compiled.
///
/// What URLSession does not let through: permessage-deflate (it never offers it, so nothing is
/// compressed), the handshake's answer body, and messages larger than its own limit, which is
/// raised to ``messageLimit`` so that ``WebSocketOptions/maximumMessageSize`` applies after it.
final class SessionWebSocketConnection: WebSocketConnection {
    private struct State {
        var decoder = WebSocketFrameDecoder(maximumPayload: Int.max, allowsCompression: false, readsClientFrames: true)
        var assembler = WebSocketMessageAssembler(maximumMessageSize: Int.max)
        /// The socket's events; `nil` once it ended.
        var events: (@Sendable (TransportEvent) -> Void)?
    }

    /// URLSession's own message limit, raised from its 1 MiB default.
    static let messageLimit = 64 << 20

    private let task: URLSessionWebSocketTask
    private let key: String
    private let state: Locked<State>
    /// Events reach the socket one at a time, in the order they were produced.
    private let delivery = DispatchQueue(label: "errand.session-websocket")

    /// Opens `task`, the upgrade of `request`, reporting to `events`.
    init(task: URLSessionWebSocketTask, request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void)
    {
        self.task = task
        key = request.headers.headerField("Sec-WebSocket-Key") ?? ""
        state = Locked(State(events: events))
        task.maximumMessageSize = Self.messageLimit
        task.resume()
        // A ping goes out once the handshake is over, and RFC 6455 has every server answer it:
        // its pong says the socket is open, without a delegate of its own.
        task.sendPing { [self] error in
            guard let error else { return opened() }
            refused(error)
        }
    }

    /// The URLRequest for `request`: the handshake's own fields left to URLSession, which makes them.
    static func urlRequest(for request: TransportRequest) -> URLRequest {
        var urlRequest = URLRequest(url: request.url, timeoutInterval: request.timeoutInterval)
        let madeByURLSession: Set<String> = [
            "upgrade", "connection", "sec-websocket-key", "sec-websocket-version", "sec-websocket-extensions",
        ]
        for (name, value) in request.headers where !madeByURLSession.contains(name.lowercased()) {
            urlRequest.setValue(value, forHTTPHeaderField: name)
        }
        urlRequest.httpShouldHandleCookies = false
        if let cookie = request.jarCookieHeader { urlRequest.setValue(cookie, forHTTPHeaderField: "Cookie") }
        return urlRequest
    }

    // MARK: The handshake

    /// The head the socket expects: `101`, the accept value of its key, the subprotocol chosen.
    private func opened() {
        var headers = ["Upgrade": "websocket", "Connection": "Upgrade"]
        headers["Sec-WebSocket-Accept"] = WebSocketHandshake.acceptValue(for: key)
        headers["Sec-WebSocket-Protocol"] = responseHeaders.headerField("Sec-WebSocket-Protocol")
        deliver(.responseHead(statusCode: 101, headers: headers))
        receiveNext()
    }

    /// A handshake that failed: the server's status when it answered, else the transport's error.
    private func refused(_ error: any Error) {
        if let response = task.response as? HTTPURLResponse, response.statusCode != 101 {
            deliver(.responseHead(statusCode: response.statusCode, headers: responseHeaders))
            return end(nil)
        }
        end(.transport(error as? URLError ?? URLError(.networkConnectionLost)))
    }

    private var responseHeaders: [String: String] {
        var headers: [String: String] = [:]
        for case (let name as String, let value as String) in (task.response as? HTTPURLResponse)?.allHeaderFields
            ?? [:]
        {
            headers[name] = value
        }
        return headers
    }

    // MARK: Receiving

    private func receiveNext() {
        task.receive { [self] result in
            switch result {
            case .success(.string(let text)):
                deliver(.body(Self.frame(.text, Data(text.utf8))))
                receiveNext()
            case .success(.data(let data)):
                deliver(.body(Self.frame(.binary, data)))
                receiveNext()
            case .success:
                receiveNext()
            case .failure(let error):
                closedOrFailed(error)
            }
        }
    }

    /// The server's close frame when URLSession saw one, else the end with the error. After a
    /// close frame the socket ends the connection itself, with the outcome its code means.
    private func closedOrFailed(_ error: any Error) {
        guard task.closeCode != .invalid else {
            return end(.transport(error as? URLError ?? URLError(.networkConnectionLost)))
        }
        let code = WebSocketCloseCode(rawValue: UInt16(clamping: task.closeCode.rawValue))
        let reason = task.closeReason.map { String(decoding: $0, as: UTF8.self) } ?? ""
        deliver(.body(Self.frame(.close, WebSocketFrame.closePayload(code, reason: reason))))
    }

    // MARK: WebSocketConnection

    func write(_ bytes: Data, completion: @escaping @Sendable (ErrandError?) -> Void) {
        let events = state.withLock { state -> [WebSocketMessageAssembler.Event] in
            state.decoder.append(bytes)
            var events: [WebSocketMessageAssembler.Event] = []
            while let frame = try? state.decoder.nextFrame() {
                if let event = try? state.assembler.receive(frame) { events.append(event) }
            }
            return events
        }
        guard !events.isEmpty else { return completion(nil) }
        for (index, event) in events.enumerated() {
            let isLast = index == events.count - 1
            switch event {
            case .message(.text(let text)):
                task.send(.string(text)) { error in if isLast { completion(error.map(Self.sendError)) } }
            case .message(.binary(let data)):
                task.send(.data(data)) { error in if isLast { completion(error.map(Self.sendError)) } }
            case .ping(let payload):
                // URLSession sends its own ping, whose pong becomes the one the socket waits for.
                task.sendPing { [self] error in
                    if error == nil { deliver(.body(Self.frame(.pong, payload))) }
                }
                if isLast { completion(nil) }
            case .pong:
                // URLSession answers the server's pings itself.
                if isLast { completion(nil) }
            case .close(let code, let reason):
                let closeCode =
                    URLSessionWebSocketTask.CloseCode(rawValue: Int(code?.rawValue ?? 1000)) ?? .normalClosure
                task.cancel(with: closeCode, reason: Data(reason.utf8))
                if isLast { completion(nil) }
            }
        }
    }

    func writeLast(_ bytes: Data, within seconds: TimeInterval, endingWith error: ErrandError?) {
        write(bytes) { _ in }
        end(error)
    }

    func close(within seconds: TimeInterval, endingWith error: ErrandError?) {
        task.cancel()
        end(error)
    }

    func cancel() {
        task.cancel()
        end(.cancelled)
    }

    // MARK: Helpers

    private func deliver(_ event: TransportEvent) {
        state.withLock { state in
            guard let events = state.events else { return }
            delivery.async { events(event) }
        }
    }

    /// Ends the socket for its reader: `nil` after a closing handshake.
    private func end(_ error: ErrandError?) {
        state.withLock { state in
            guard let events = state.events else { return }
            state.events = nil
            delivery.async { events(.completed(error)) }
        }
    }

    private static func frame(_ opcode: WebSocketFrame.Opcode, _ payload: Data) -> Data {
        WebSocketFrame(opcode: opcode, payload: payload).encoded(maskingKey: nil)
    }

    private static func sendError(_ error: any Error) -> ErrandError {
        .transport(error as? URLError ?? URLError(.networkConnectionLost))
    }
}
