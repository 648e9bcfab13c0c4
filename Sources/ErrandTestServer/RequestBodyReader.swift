import Foundation

/// Hands a streaming route (`Route(streamsBody: true)`) its request body piece by piece, read
/// off the socket as the handler asks for it, so an upload of any size costs one read buffer.
final class RequestBodyReader {
    enum Outcome {
        case complete
        /// The body's framing is broken: answer with `status` and close.
        case failure(status: Int, reason: String)
        /// The client hung up (or the server is stopping) before the body ended.
        case peerGone
    }

    /// Lent by the connection for the length of one body and taken back afterwards.
    private(set) var parser: HTTPRequestParser
    /// `nil` until the body has ended one way or another.
    private(set) var outcome: Outcome?
    /// The connection's socket, for a route that answers while it reads.
    let descriptor: Int32
    private var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)

    init(parser: HTTPRequestParser, descriptor: Int32) {
        self.parser = parser
        self.descriptor = descriptor
    }

    /// The next non-empty piece of the body; `nil` once it has ended (`outcome` says how).
    func next() -> Data? {
        while outcome == nil {
            switch parser.nextBodyChunk() {
            case .data(let data):
                if !data.isEmpty { return data }
            case .end:
                outcome = .complete
            case .failure(let status, let reason):
                outcome = .failure(status: status, reason: reason)
            case .incomplete:
                if parser.takeContinueRequest() && !Socket.sendAll(descriptor, HTTPResponse.continueResponse) {
                    outcome = .peerGone
                    break
                }
                let count = Socket.receive(descriptor, into: &readBuffer)
                guard count > 0 else {
                    outcome = .peerGone
                    break
                }
                parser.append(readBuffer[0..<count])
            }
        }
        return nil
    }

    /// The trailer fields that followed a chunked body, once it has ended.
    var trailers: [HTTPHeader] { parser.streamedTrailers }

    /// Reads and drops whatever the handler left unread, so the next request starts in the right place.
    func drain() {
        while next() != nil {}
    }
}
