import Foundation

/// Steers one streamed request's events: a head its `statusCodeValidator` accepts opens the
/// ``ResponseStream`` for the caller, and the body then goes to the stream's consumer as it
/// arrives; a rejected response keeps the start of its body on the task, as any failed request.
final class StreamReceiver: Sendable {
    /// Opens the stream for the caller of `stream()`, or tells it why it could not be opened.
    typealias Opener = @Sendable (Result<ResponseStream, ErrandError>) -> Void

    private struct State {
        var opener: Opener?
        /// Whether this attempt's head was accepted, so that its body is the consumer's.
        var isStreaming = false
        /// Bytes of a rejected response's body kept on the task.
        var keptBytes = 0
        var receivedBytes = 0
        /// A WebSocket's connection: the attempt's transport task, kept after it ends, for a
        /// server may drop it before the socket is made, which must then see the drop.
        var connection: (any WebSocketConnection)?
        /// A WebSocket's accepted head that came before its transport task was attached: the
        /// stream opens at the attach, so that it never opens without its connection.
        var acceptedHead: Response?
        /// Whether the current attempt's transport task was attached.
        var isAttached = false
        var closing: (@Sendable () -> Void)?
    }

    /// The most bytes of a rejected response's body the task keeps, for the caller to read why,
    /// unless the plan keeps all of it (``RequestPlan/refusedStreamBodyLimit``).
    static let keptErrorBodySize = 64 << 10
    /// Bytes held ahead of a stream's consumer before its transfer pauses, unless the transport
    /// sets its own (``StreamBufferingTransport``).
    static let bufferLimit = 1 << 20

    let buffer: StreamBuffer
    /// Header fields the stream's reader sets on every attempt, over the request's own: an
    /// ``EventSource``'s `Accept` and `Last-Event-ID`, a WebSocket's handshake fields.
    let headers: [String: String]
    /// Whether the request is a WebSocket's handshake: only `101` opens the stream (its plan's
    /// rules say so), whose body is then the peer's bytes.
    let upgradesToWebSocket: Bool
    private let state: Locked<State>
    /// The attempt on the wire, which the buffer pauses and resumes.
    private let transportTask: Locked<(any TransportTask)?>

    /// - Parameters:
    ///   - bufferLimit: Bytes held ahead of the consumer before the transfer pauses.
    ///   - headers: See ``headers``.
    ///   - opened: Called once: with the stream when a head is accepted, or with the error when
    ///     the request ended before one was.
    ///   - upgradesToWebSocket: See ``upgradesToWebSocket``. Default `false`.
    init(
        bufferLimit: Int, headers: [String: String] = [:], upgradesToWebSocket: Bool = false,
        opened: @escaping Opener
    ) {
        self.headers = headers
        self.upgradesToWebSocket = upgradesToWebSocket
        let transportTask = Locked<(any TransportTask)?>(nil)
        self.transportTask = transportTask
        state = Locked(State(opener: opened))
        buffer = StreamBuffer(limit: bufferLimit) { pause in
            let task = transportTask[\.self]
            if pause { task?.pauseReceiving() } else { task?.resumeReceiving() }
        }
    }

    /// Whether the current attempt's body goes to the consumer: it is then neither kept nor parsed.
    var isStreaming: Bool { state[\.isStreaming] }

    /// Body bytes handed to the consumer so far: what the response's `data`, left empty, does not say.
    var streamedBytes: Int { state.withLock { $0.isStreaming ? $0.receivedBytes : 0 } }

    /// Whether the stream was handed to the caller, or the request ended before it could be.
    var isOpen: Bool { state.withLock { $0.opener == nil } }

    /// Whether the consumer may already have seen body bytes: the request is then not retried.
    var hasHandedOutBody: Bool { buffer.hasReceivedBody }

    /// What cancelling the task runs instead of stopping the transport: an open WebSocket's
    /// closing handshake, whose end then ends the task.
    var closing: (@Sendable () -> Void)? {
        get { state[\.closing] }
        set { state[\.closing] = newValue }
    }

    /// The connection of the attempt on the wire, when its transport upgraded it for a WebSocket.
    var connection: (any WebSocketConnection)? { state[\.connection] }

    /// Keeps the transport task of a new attempt, for the buffer to pause and, for a WebSocket,
    /// as its connection; opens the stream of a head that came first.
    func attach(_ transportTask: any TransportTask, of task: RequestTask, maximumEventSize: Int) {
        self.transportTask[\.self] = transportTask
        guard upgradesToWebSocket else { return }
        let (opener, head) = state.withLock { state -> (Opener?, Response?) in
            state.connection = transportTask as? any WebSocketConnection
            state.isAttached = true
            guard let head = state.acceptedHead else { return (nil, nil) }
            state.acceptedHead = nil
            defer { state.opener = nil }
            return (state.opener, head)
        }
        if let opener, let head { open(head, task: task, maximumEventSize: maximumEventSize, with: opener) }
    }

    private func open(_ head: Response, task: RequestTask, maximumEventSize: Int, with opener: Opener) {
        opener(.success(ResponseStream(response: head, task: task, buffer: buffer, maximumLineSize: maximumEventSize)))
    }

    /// Takes one event of `task`'s current attempt; `rules` judge its head, and
    /// `maximumEventSize` bounds one line or event of the stream that opens. A rejected
    /// response keeps the start of its body, or, with a `refusedBodyLimit`, all of it up to that
    /// many bytes and fails with ``ErrandError/responseTooLarge(_:)`` past them.
    func receive(
        _ event: TransportEvent, task: RequestTask, rules: ResponseRules, maximumEventSize: Int,
        refusedBodyLimit: Int?
    ) -> EventDisposition {
        switch event {
        case .responseHead(let statusCode, let headers):
            let accepted = rules.acceptsStatus(statusCode)
            let head = Response(statusCode: statusCode, headers: headers, data: Data())
            let opener = state.withLock { state -> Opener? in
                state.isStreaming = accepted
                state.keptBytes = 0
                guard accepted else { return nil }
                if upgradesToWebSocket, !state.isAttached {
                    state.acceptedHead = head
                    return nil
                }
                defer { state.opener = nil }
                return state.opener
            }
            if let opener { open(head, task: task, maximumEventSize: maximumEventSize, with: opener) }
            return .record(event)
        case .body(let chunk):
            let keptLimit = max(0, refusedBodyLimit ?? Self.keptErrorBodySize)
            let (streaming, kept, received) = state.withLock { state -> (Bool, Int, Int) in
                if state.isStreaming {
                    state.receivedBytes += chunk.count
                    return (true, 0, state.receivedBytes)
                }
                let kept = min(chunk.count, keptLimit - state.keptBytes)
                state.keptBytes += kept
                return (false, kept, 0)
            }
            guard streaming else {
                if kept < chunk.count, let refusedBodyLimit { return .fail(.responseTooLarge(refusedBodyLimit)) }
                guard kept < chunk.count else { return .record(event) }
                // The start of the body is kept; what follows is not read, however long the server
                // would go on sending it.
                return .recordAndEnd(kept > 0 ? .body(chunk.prefix(kept)) : nil)
            }
            buffer.push(chunk)
            task.progress.receivedBody(received)
            // A socket's bytes are frames: recorders get its messages, masked, from the socket.
            if task.monitors.hasRecorders, !upgradesToWebSocket {
                task.monitors.request(task, streamedBody: chunk, at: received - chunk.count)
            }
            return .consumed
        case .completed(let error):
            transportTask[\.self] = nil
            let (streaming, received) = state.withLock { state in
                // A rejected attempt's transport task is not the next attempt's.
                if !state.isStreaming { (state.connection, state.isAttached) = (nil, false) }
                return (state.isStreaming, state.receivedBytes)
            }
            if streaming, error == nil { task.progress.receivedBody(received, isComplete: true) }
            return .record(event)
        case .interimHead, .uploadProgress, .trailers, .metrics:
            return .record(event)
        }
    }

    /// The task finished: the caller that waits for the stream to open gets the error, or the
    /// open stream ends after what it holds — at once when cancelled.
    func finished(_ outcome: Result<Response, ErrandError>) {
        let opener = state.withLock { state -> Opener? in
            // A WebSocket's head that came before its transport task was attached opens the
            // stream once it is: the caller is told there, even when the task already ended.
            if case .success = outcome, state.acceptedHead != nil { return nil }
            defer { state.opener = nil }
            return state.opener
        }
        switch outcome {
        case .success(let response):
            buffer.finish(nil, trailers: response.trailers)
        case .failure(.cancelled):
            buffer.cancel(with: .cancelled)
        case .failure(let error):
            buffer.finish(error)
        }
        if case .failure(let error) = outcome { opener?(.failure(error)) }
    }
}
