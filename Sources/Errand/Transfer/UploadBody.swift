import Foundation

/// A request body sent as it is — bytes, a file, or a stream produced while it is sent — rather
/// than built from `arguments`.
///
/// Equatable: bytes and files compare by value; a stream only by identity (see ``BodyStream``),
/// since two streams cannot be compared without consuming them.
public enum UploadBody: Sendable, Equatable {
    /// Bytes held in memory.
    case data(Data)
    /// A local file, streamed from disk as it is sent, never read whole into memory.
    case file(URL)
    /// Chunks produced while the body is sent; ``stream(_:length:)`` makes one.
    case stream(BodyStream)

    /// A body produced while it is sent: each chunk `chunks` yields goes out as the connection
    /// takes it, and the body ends when the stream finishes.
    ///
    /// With `length` the request declares `Content-Length: length`, and fails with
    /// ``ErrandError/serialization(_:)`` when the stream produces more or fewer bytes; with `nil`
    /// the body goes out chunked (`Transfer-Encoding: chunked` on HTTP/1.1). Upload progress is
    /// reported as for a file, its last value's total the bytes sent.
    ///
    /// A response that ends before the body does ends the request there, and the stream with it
    /// (its `onTermination` runs with `.cancelled`). The response's body arrives as the server sent
    /// it: the request asks for no content coding, as libcurl could not otherwise tell where it ends.
    ///
    /// The stream is read once, so such a request is never retried (interceptors are not asked),
    /// never shares a call with an identical one, and fails with
    /// ``ErrandError/redirectRefused(_:)`` on a 307 or 308 redirect, which would need the body again.
    /// Cancelling the request ends the stream: its `onTermination` runs with `.cancelled`.
    ///
    /// The transport reads ahead only a small buffer (256 KiB with ``CurlTransport``), but an
    /// `AsyncStream` fed through its continuation holds whatever is yielded and not yet read: for
    /// a large body, produce chunks on demand with `AsyncStream(unfolding:)`, or yield no faster
    /// than ``RequestTask/uploadProgress`` moves. On Linux ``URLSessionTransport`` sends such a
    /// body through libcurl, as it does streams; where it cannot, and on Apple platforms, it fails
    /// the request with `URLError(.unsupportedURL)` saying why. See <doc:Transfers>.
    /// - Parameters:
    ///   - chunks: The body's bytes, in order; empty chunks are skipped.
    ///   - length: The body's length in bytes, or `nil` when it is not known in advance.
    public static func stream(_ chunks: AsyncStream<Data>, length: Int64?) -> UploadBody {
        .stream(BodyStream(chunks, length: length))
    }

    /// A body produced while it is sent, as ``stream(_:length:)`` makes one, followed by trailer
    /// fields: what the producer knows only at the end, such as a checksum of what it sent.
    ///
    /// ```swift
    /// let parts = [Data("id,total\n".utf8), Data("1,9.50\n".utf8)]
    /// let chunks = AsyncStream<Data> { continuation in
    ///     parts.forEach { continuation.yield($0) }
    ///     continuation.finish()
    /// }
    /// let body = UploadBody.stream(chunks, length: nil) { ["X-Row-Count": String(parts.count)] }
    /// ```
    ///
    /// `trailers` is called once, after `chunks` finished and before the last of the body goes
    /// out. The body is sent chunked, even with a `length` (which is still checked), and over
    /// HTTP/1.1, the one version through which libcurl sends trailers; with
    /// ``HTTPVersionPreference/http2PriorKnowledge`` on plain `http` the request fails with
    /// ``ErrandError/transport(_:)`` saying so. See <doc:Transfers>. A field whose name is not an
    /// HTTP token, whose value holds a line break or NUL, or that frames, routes, authenticates or
    /// conditions the message (`Content-Length`, `Transfer-Encoding`, `Host`, `Authorization`,
    /// `Cookie`, `Cache-Control`, `If-…`, …) fails the request with
    /// ``ErrandError/serialization(_:)`` naming it; so do fields that take 64 KiB or more as
    /// lines, which libcurl cannot send.
    /// - Parameters:
    ///   - chunks: The body's bytes, in order; empty chunks are skipped.
    ///   - length: The body's length in bytes, or `nil` when it is not known in advance.
    ///   - trailers: The trailer fields, asked for once the chunks ended.
    public static func stream(
        _ chunks: AsyncStream<Data>, length: Int64?, trailers: @escaping @Sendable () async -> [String: String]
    ) -> UploadBody {
        .stream(BodyStream(chunks, length: length, trailers: trailers))
    }
}
