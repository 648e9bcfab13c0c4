import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A request body produced while it is sent: the chunks of an `AsyncStream`, read once.
///
/// ``UploadBody/stream(_:length:)`` makes one for a request, and ``TransportRequest/bodyStream``
/// carries it to the transport. Because its chunks can be read only once, it is equal only to
/// itself (the same instance, as copies of a ``TransportRequest`` share it), never to another
/// stream of the same bytes; a request with one is never retried, coalesced or sent again
/// after a 307 or 308 redirect.
public final class BodyStream: Sendable, Hashable {
    /// The body's length in bytes, sent as `Content-Length`; `nil` when unknown, and then the
    /// body goes out with chunked transfer encoding (on HTTP/1.1).
    ///
    /// The stream must produce exactly this many bytes and then finish: a transport fails the
    /// request with ``ErrandError/serialization(_:)`` when it produces more or fewer.
    public let length: Int64?

    /// `nil` once taken.
    private let chunks: Locked<AsyncStream<Data>?>
    private let makeTrailers: (@Sendable () async -> [String: String])?

    /// Wraps `chunks`, which make a body of `length` bytes (`nil`: unknown), followed by the
    /// trailer fields `trailers` returns once the chunks ended (`nil`: none).
    public init(
        _ chunks: AsyncStream<Data>, length: Int64?, trailers: (@Sendable () async -> [String: String])? = nil
    ) {
        self.chunks = Locked(chunks)
        self.length = length
        makeTrailers = trailers
    }

    /// Whether the body ends with trailer fields, and so goes out chunked on HTTP/1.1 whatever
    /// its ``length``.
    public var hasTrailers: Bool { makeTrailers != nil }

    /// The trailer fields to send after the last chunk; a transport asks once the chunks ended.
    /// Empty when the body has none.
    public func trailers() async -> [String: String] {
        await makeTrailers?() ?? [:]
    }

    /// The chunks, to the first caller only; `nil` to any later one, which must fail its request
    /// with ``alreadySent(to:)`` rather than send a body that is not there. A ``Transport``
    /// takes them when it starts sending the request.
    public func take() -> AsyncStream<Data>? {
        chunks.withLock { chunks in
            defer { chunks = nil }
            return chunks
        }
    }

    /// Ends the stream for its producer unless a transport took it: the producer's
    /// `onTermination` runs with `.cancelled`, and it yields no more into a stream nobody reads.
    func discard() {
        take().map(Self.end)
    }

    /// Ends `chunks` for its producer, whose `onTermination` runs with `.cancelled`, unless it ended already.
    static func end(_ chunks: AsyncStream<Data>) {
        // Waiting in a cancelled task terminates the stream: the only way to end it from the
        // reading side while the producer still holds its continuation.
        Task { for await _ in chunks {} }.cancel()
    }

    /// Whether `lhs` and `rhs` are the same stream.
    public static func == (lhs: BodyStream, rhs: BodyStream) -> Bool {
        lhs === rhs
    }

    /// Hashes the instance's identity, as ``==(_:_:)`` compares it.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(self))
    }

    /// The error for a request whose body stream was already taken by an earlier send.
    public static func alreadySent(to url: URL) -> ErrandError {
        .transport(
            URLError(
                .requestBodyStreamExhausted,
                userInfo: [
                    NSURLErrorFailingURLErrorKey: url,
                    NSLocalizedDescriptionKey:
                        "the streamed request body was already sent once and cannot be sent again",
                ]))
    }
}
