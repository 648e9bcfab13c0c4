import Foundation

/// A response whose body is read as it arrives: the chunks of a Server-Sent Events feed, NDJSON
/// log lines, a body too large to hold.
///
/// ```swift
/// let stream = try await ChatCompletionsApi(prompt: "Hello").stream()
/// for try await event in stream.events {
///     guard event.data != "[DONE]" else { break }
///     print(try event.decode(ChatChunk.self).text, terminator: "")
/// }
/// ```
///
/// The stream is consumed once, through one of its views: the raw chunks (iterate the stream
/// itself), ``lines``, ``events`` or ``collect(upTo:)``. Iteration throws ``ErrandError``: the
/// transport's error when the connection fails mid-body, and ``ErrandError/cancelled`` once the
/// consuming Swift task is cancelled or ``cancel()`` was called. Leaving a loop early cancels the
/// transfer too, even while the stream is still referenced, and so does releasing a stream that
/// was never read: `guard stream.response.statusCode == 200 else { return }` leaves no
/// connection behind.
///
/// At most about 1 MiB (``CurlTransport/bufferLimit``) waits ahead of a slow consumer; the
/// transfer then pauses until the consumer has read half of it, so memory stays flat however
/// long the stream is (under ``URLSessionTransport`` on Linux, see its notes).
public final class ResponseStream: AsyncSequence, Sendable {
    /// A chunk of the body, in arrival order.
    public typealias Element = Data
    /// What iteration throws.
    public typealias Failure = ErrandError

    /// The response's head: status, headers, and an empty `data`.
    public let response: Response
    /// The task that runs the request: its ``RequestTask/metrics``, ``RequestTask/error`` and
    /// progress, its `tag` and `userInfo`.
    public let task: RequestTask

    /// The interim (1xx) heads that came before ``response``, in order, such as `103 Early Hints`
    /// with the `Link` fields of what to preload; empty when none came.
    public var interimResponses: [Response] { task.interimResponses }

    /// The trailer fields that followed the body, once iteration has returned `nil` (or
    /// ``collect(upTo:)`` its body); empty before, and when none came. Look names up with
    /// ``value(forTrailer:)``, which ignores case.
    public var trailers: [String: String] { buffer.trailers }

    /// The value of a trailer field, matched case-insensitively; `nil` before the body ended and
    /// when the field did not come.
    public func value(forTrailer name: String) -> String? {
        trailers.headerField(name)
    }

    let buffer: StreamBuffer
    /// The longest line or event ``lines`` and ``events`` accept: the request's `maximumResponseSize`.
    let maximumLineSize: Int

    init(response: Response, task: RequestTask, buffer: StreamBuffer, maximumLineSize: Int) {
        self.response = response
        self.task = task
        self.buffer = buffer
        self.maximumLineSize = maximumLineSize
    }

    /// A stream released unread, or with an iterator that went away, would otherwise keep its
    /// paused transfer, connection and buffer until ``NetworkAgent/cancelAllRequests()``.
    deinit {
        cancel()
    }

    /// Stops the transfer; the consumer's next read throws ``ErrandError/cancelled``, and what
    /// had arrived but was not read is dropped. Does nothing once the stream ended.
    public func cancel() {
        buffer.cancel(with: .cancelled)
        task.cancel()
    }

    /// The whole body, for a stream that turns out to be short.
    /// - Throws: ``ErrandError/responseTooLarge(_:)`` as soon as it passes `maxBytes`, and the
    ///   transfer is then cancelled; or any error iteration throws.
    public func collect(upTo maxBytes: Int) async throws(ErrandError) -> Data {
        var body = Data()
        var chunks = makeAsyncIterator()
        while let chunk = try await chunks.next() {
            guard body.count + chunk.count <= maxBytes else {
                cancel()
                throw .responseTooLarge(maxBytes)
            }
            body.append(chunk)
        }
        return body
    }

    /// Iterates the body's chunks; see the type's notes for how often a stream can be iterated.
    public func makeAsyncIterator() -> Iterator {
        Iterator(consumer: Consumer(stream: self))
    }

    /// Reads a ``ResponseStream``'s chunks in order.
    public struct Iterator: AsyncIteratorProtocol {
        /// A chunk of the body.
        public typealias Element = Data
        /// What iteration throws.
        public typealias Failure = ErrandError

        private let consumer: Consumer

        fileprivate init(consumer: Consumer) {
            self.consumer = consumer
        }

        /// The next chunk, or `nil` at the end of the body.
        public mutating func next() async throws(ErrandError) -> Data? {
            try await consumer.next()
        }

        /// The next chunk, or `nil` at the end of the body.
        @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(ErrandError) -> Data? {
            try await consumer.next(isolation: actor)
        }

        /// The next chunk, read on `actor` as the views over the stream read, on every OS version.
        func nextChunk(isolation actor: isolated (any Actor)?) async throws(ErrandError) -> Data? {
            try await consumer.next(isolation: actor)
        }
    }

    /// The one reader of a stream: it claims the buffer on its first read, and cancels the
    /// transfer when it goes away before the end.
    fileprivate final class Consumer {
        private let stream: ResponseStream
        private var hasClaimed = false
        private var hasEnded = false

        init(stream: ResponseStream) {
            self.stream = stream
        }

        deinit {
            if hasClaimed, !hasEnded { stream.cancel() }
        }

        /// Reads on the caller's isolation: the consumer belongs to the iterator that holds it.
        func next(isolation actor: isolated (any Actor)? = #isolation) async throws(ErrandError) -> Data? {
            guard !hasEnded else { return nil }
            if !hasClaimed {
                guard stream.buffer.claim() else {
                    hasEnded = true
                    throw .serialization(
                        "the stream of \(stream.task.transportRequest?.url.absoluteString ?? "a request") was "
                            + "already read: a ResponseStream is consumed once")
                }
                hasClaimed = true
            }
            let stream = self.stream
            if Task.isCancelled { stream.cancel() }
            let result = await withTaskCancellationHandler {
                await stream.buffer.next()
            } onCancel: {
                stream.cancel()
            }
            switch result {
            case .success(let chunk?):
                return chunk
            case .success(nil):
                hasEnded = true
                return nil
            case .failure(let error):
                hasEnded = true
                throw error
            }
        }
    }
}
