/// A transport that says how much of a streamed body may wait ahead of its consumer, as
/// ``CurlTransport/bufferLimit`` does: a ``ResponseStream`` on it holds no more than that before
/// its transfer pauses. Others get ``StreamReceiver/bufferLimit``.
protocol StreamBufferingTransport: Transport {
    /// Body bytes a consumer may fall behind before the transfer pauses.
    var bufferLimit: Int { get }
}

extension CurlTransport: StreamBufferingTransport {}
