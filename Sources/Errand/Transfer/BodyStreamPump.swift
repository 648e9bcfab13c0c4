import Foundation

/// Moves a ``BodyStream``'s chunks into a small buffer for a transport that reads it on a thread
/// that must never wait, such as libcurl's read callback: a read takes what is there, or is told
/// to come back, and the pump calls `wake` once there is more.
///
/// A task reads the stream ahead of the transport, and suspends — never blocks — while the
/// buffer holds `limit` bytes not yet read, so a body of any length costs about `limit` in
/// memory. It checks the bytes against the declared length: with a length, the last byte is
/// handed out only once the stream has finished, so that a stream that then yields more fails
/// the request instead of ending it as if complete.
final class BodyStreamPump: Sendable {
    /// What a read got.
    enum Read: Equatable {
        /// This many bytes were copied.
        case bytes(Int)
        /// None are ready: `wake` runs once some are, or the body failed.
        case empty
        /// The body ended, every byte read.
        case end
        /// The body cannot be sent whole: too long, too short, or the pump was stopped.
        case failed(ErrandError)
    }

    private struct State {
        /// Chunks not yet read in full, from `head` on; `offset` bytes of the first were read.
        var chunks: [Data] = []
        var head = 0
        var offset = 0
        /// Bytes in `chunks` not yet read.
        var buffered = 0
        /// The most bytes `buffered` ever held.
        var highWaterMark = 0
        /// Bytes taken from the stream, and bytes read from the buffer.
        var received: Int64 = 0
        var handedOut: Int64 = 0
        /// The stream finished, every byte declared received, and its trailer fields are in.
        var isEnded = false
        /// The trailer fields to send after the last byte, once ended.
        var trailers: [String: String] = [:]
        var failure: ErrandError?
        var isStarted = false
        var isStopped = false
        /// A read found nothing ready and waits for `wake`.
        var wantsWake = false
        /// The pump waits for room in the buffer.
        var room: CheckedContinuation<Void, Never>?
        var pumping: Task<Void, Never>?
    }

    /// The default buffer: a few of libcurl's 64 KiB reads.
    static let defaultLimit = 256 << 10

    private let body: BodyStream
    private let url: URL
    /// Bytes the buffer may hold unread before the pump waits.
    let limit: Int
    private let wake: @Sendable () -> Void
    private let state = Locked(State())

    /// A pump for `body`, sent to `url`, that calls `wake` (from any thread) when bytes are ready
    /// for a read that found none. Nothing is read until ``start()``.
    init(body: BodyStream, url: URL, limit: Int = BodyStreamPump.defaultLimit, wake: @escaping @Sendable () -> Void) {
        self.body = body
        self.url = url
        self.limit = max(limit, 1)
        self.wake = wake
    }

    /// The declared length; `nil` when unknown.
    var length: Int64? { body.length }

    /// The most bytes the buffer held at once.
    var highWaterMark: Int { state[\.highWaterMark] }

    /// Whether the body ends with trailer fields.
    var hasTrailers: Bool { body.hasTrailers }

    /// The trailer fields, once a read returned ``Read/end``; empty before and when none.
    var trailers: [String: String] { state[\.trailers] }

    /// Starts reading the stream; `false` when an earlier send already took it.
    func start() -> Bool {
        guard let chunks = body.take() else { return false }
        let pumping = Task { [self] in await pump(chunks) }
        let stoppedMeanwhile = state.withLock { state -> Bool in
            state.isStarted = true
            state.pumping = pumping
            return state.isStopped
        }
        if stoppedMeanwhile { pumping.cancel() }
        return true
    }

    /// Stops reading the stream, whose producer's `onTermination` then runs with `.cancelled`;
    /// later reads fail. Ends the stream also when it was never started. Safe to call again.
    func stop() {
        let (pumping, room, isStarted, wakes) = state.withLock { state in
            state.isStopped = true
            state.failure = state.failure ?? .cancelled
            state.chunks = []
            state.head = 0
            state.buffered = 0
            defer { state.room = nil }
            return (state.pumping, state.room, state.isStarted, Self.takeWake(&state))
        }
        room?.resume()
        pumping?.cancel()
        if !isStarted { body.discard() }
        // A transfer waiting for bytes reads the failure, and ends, rather than wait on.
        if wakes { wake() }
    }

    /// Copies the next bytes into `buffer`, never waiting.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Read {
        let (read, room) = state.withLock { state -> (Read, CheckedContinuation<Void, Never>?) in
            if let failure = state.failure { return (.failed(failure), nil) }
            var allowed = state.buffered
            if let length = body.length, !state.isEnded {
                // The last declared byte waits for the stream's end: see the type's documentation.
                allowed = min(allowed, Int(clamping: max(0, length - 1 - state.handedOut)))
            }
            let count = min(buffer.count, allowed)
            guard count > 0 else {
                if state.isEnded && state.buffered == 0 { return (.end, nil) }
                state.wantsWake = true
                return (.empty, nil)
            }
            Self.copy(count, from: &state, into: buffer)
            guard state.buffered < limit, let room = state.room else { return (.bytes(count), nil) }
            state.room = nil
            return (.bytes(count), room)
        }
        room?.resume()
        return read
    }

    // MARK: The pump task

    private func pump(_ chunks: AsyncStream<Data>) async {
        for await chunk in chunks where !chunk.isEmpty {
            // Stopped, or too long: the producer must learn that nobody reads on.
            guard await roomForMore(), accept(chunk) else { return BodyStream.end(chunks) }
        }
        let trailers = body.hasTrailers && !state[\.isStopped] ? await body.trailers() : [:]
        streamFinished(trailers: trailers)
    }

    /// Waits until the buffer holds less than `limit`; `false` once stopped.
    private func roomForMore() async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state -> Bool in
                guard !state.isStopped, state.buffered >= limit else { return true }
                state.room = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
        return !state[\.isStopped]
    }

    /// Buffers `chunk`; `false` when the pump stopped or the chunk makes the body too long.
    private func accept(_ chunk: Data) -> Bool {
        let (accepted, wakeNow) = state.withLock { state -> (Bool, Bool) in
            guard !state.isStopped else { return (false, false) }
            let received = state.received + Int64(chunk.count)
            if let length = body.length, received > length {
                state.failure = .serialization(
                    "the streamed upload body to \(url.absoluteString) produced more than its declared length of"
                        + " \(length) bytes (\(received) so far)")
                state.chunks = []
                state.head = 0
                state.buffered = 0
                return (false, Self.takeWake(&state))
            }
            state.received = received
            state.chunks.append(chunk)
            state.buffered += chunk.count
            state.highWaterMark = max(state.highWaterMark, state.buffered)
            return (true, Self.takeWake(&state))
        }
        if wakeNow { wake() }
        return accepted
    }

    /// The stream finished, followed by `trailers`: the body ends once read, or fails when
    /// shorter than declared or when a trailer field cannot be sent.
    private func streamFinished(trailers: [String: String]) {
        let refusal = Self.refusal(of: trailers)
        let wakeNow = state.withLock { state -> Bool in
            // Cancelled: the stream ended because the pump stopped, not because the body did.
            guard !state.isStopped else { return false }
            if let length = body.length, state.received < length {
                state.failure = .serialization(
                    "the streamed upload body to \(url.absoluteString) ended after \(state.received) bytes, short"
                        + " of its declared length of \(length) bytes")
            } else if let refusal {
                state.failure = .serialization(
                    "the streamed upload body to \(url.absoluteString) cannot end with its trailer fields: \(refusal)")
            } else {
                state.trailers = trailers
                state.isEnded = true
            }
            return Self.takeWake(&state)
        }
        if wakeNow { wake() }
    }

    /// Why `trailers` cannot be sent, or `nil`: a name that is no HTTP token, a value that would
    /// end the line, a field that frames, routes or authenticates the message, which a
    /// recipient must not take from a trailer (RFC 9110 §6.5.1) and a redirect would not drop, or
    /// more lines than ``trailerLimit``.
    static func refusal(of trailers: [String: String]) -> String? {
        // Each `name: value` line and its CRLF, then the CRLF that ends them.
        let size = trailers.reduce(2) { $0 + $1.key.utf8.count + $1.value.utf8.count + 4 }
        guard size < trailerLimit else {
            return "the trailer fields take \(size) bytes, and libcurl sends less than \(trailerLimit >> 10) KiB"
        }
        for (name, value) in trailers.sorted(by: { $0.key < $1.key }) {
            guard HeaderFieldCheck.isToken(name) else {
                return "the name \"\(name.prefix(64))\" is not an HTTP token"
            }
            guard !value.containsLineBreak, !value.utf8.contains(0) else {
                return "the value of \(name) holds a line break or NUL"
            }
            let lowercased = name.lowercased()
            guard !forbiddenTrailers.contains(lowercased), !lowercased.hasPrefix("if-") else {
                return "\(name) frames, routes, authenticates or conditions a message and cannot be a trailer field"
            }
        }
        return nil
    }

    /// What libcurl (7.x, 8.x) holds a body's trailer lines in: at this size or past it, it fails
    /// the request as out of memory, after the body went.
    static let trailerLimit = 64 << 10

    private static let forbiddenTrailers: Set<String> = [
        "content-length", "transfer-encoding", "trailer", "te", "host", "connection", "keep-alive", "upgrade",
        "expect", "content-encoding", "content-type", "content-range", "authorization", "proxy-authorization",
        "cookie", "set-cookie", "cache-control", "pragma", "max-forwards", "range",
    ]

    private static func takeWake(_ state: inout State) -> Bool {
        defer { state.wantsWake = false }
        return state.wantsWake
    }

    /// Moves `count` buffered bytes, no more than there are, into `buffer`.
    private static func copy(_ count: Int, from state: inout State, into buffer: UnsafeMutableRawBufferPointer) {
        var copied = 0
        while copied < count {
            let chunk = state.chunks[state.head]
            let start = chunk.startIndex + state.offset
            let take = min(count - copied, chunk.endIndex - start)
            chunk.copyBytes(
                to: UnsafeMutableRawBufferPointer(rebasing: buffer[copied..<copied + take]), from: start..<start + take)
            copied += take
            state.offset += take
            if start + take == chunk.endIndex {
                state.head += 1
                state.offset = 0
            }
        }
        state.buffered -= count
        state.handedOut += Int64(count)
        // Drops the chunks read, now and then rather than each time, which would cost a move per chunk.
        if state.head == state.chunks.count {
            state.chunks.removeAll(keepingCapacity: true)
            state.head = 0
        } else if state.head > 64 && state.head * 2 > state.chunks.count {
            state.chunks.removeFirst(state.head)
            state.head = 0
        }
    }
}
