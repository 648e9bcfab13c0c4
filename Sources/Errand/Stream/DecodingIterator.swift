import Foundation

/// Reads a ``ResponseStream``'s chunks through a ``ChunkDecoder``, one element at a time. A
/// decoding error cancels the transfer: nothing after it could be read.
struct DecodingIterator<Decoder: ChunkDecoder> {
    private(set) var decoder: Decoder
    private var chunks: ResponseStream.Iterator
    private let stream: ResponseStream
    private var pending: [Decoder.Element] = []
    private var nextIndex = 0
    private var hasEnded = false

    init(stream: ResponseStream, decoder: Decoder) {
        self.stream = stream
        self.decoder = decoder
        chunks = stream.makeAsyncIterator()
    }

    mutating func next(isolation actor: isolated (any Actor)? = #isolation) async throws(ErrandError)
        -> Decoder.Element?
    {
        while nextIndex == pending.count {
            guard !hasEnded else { return nil }
            pending.removeAll(keepingCapacity: true)
            nextIndex = 0
            do throws(ErrandError) {
                if let chunk = try await chunks.nextChunk(isolation: actor) {
                    pending = try decoder.decode(chunk)
                } else {
                    hasEnded = true
                    pending = try decoder.decodeEnd()
                }
            } catch {
                hasEnded = true
                if error != .cancelled { stream.cancel() }
                throw error
            }
        }
        defer { nextIndex += 1 }
        return pending[nextIndex]
    }

    /// Whether every element decoded so far was handed out: what the decoder knows is then no
    /// further along than what the reader was given.
    var isCaughtUp: Bool { nextIndex == pending.count }
}
