import Foundation

extension NetworkAgent {
    /// Opens a WebSocket to `request`'s URL: the opening handshake goes through the same stages
    /// as any request, and a `101` whose fields match the offer opens the socket.
    /// - Throws: ``ErrandError/statusCode(_:)`` for any other answer (the task keeps up to 64 KiB
    ///   of its body, decoded), ``ErrandError/serialization(_:)`` for a subprotocol that is not a
    ///   token (before anything is sent) or a `101` that does not match the offer, `.timedOut`
    ///   when the whole handshake took longer than the request's `timeoutInterval`, `.transport`
    ///   when the transport cannot open WebSockets, or any error a request can fail with before
    ///   its response.
    public func webSocket(_ request: some BaseRequest, options: WebSocketOptions = WebSocketOptions())
        async throws(ErrandError) -> WebSocket
    {
        let handshake = WebSocketHandshake(options: options)
        try handshake.checkOffer()
        let fields = Dictionary(handshake.headerFields.map { ($0.name, $0.value) }) { $1 }
        let stream = try await stream(request, headers: fields, upgradesToWebSocket: true)
        guard let connection = stream.task.stream?.connection else {
            stream.cancel()
            throw WebSocketHandshake.unsupported(by: "the agent's transport")
        }
        let agreement: WebSocketHandshake.Agreement
        do {
            agreement = try handshake.agreement(with: stream.response)
        } catch {
            stream.cancel()
            throw error
        }
        return WebSocket(
            stream: stream, connection: connection, agreement: agreement, options: options, timer: pipeline.retryTimer)
    }
}
