import Foundation
import Testing

@testable import ErrandTestServer

/// How `TestServer` reads a chunked request body's trailer fields, which `/conformance/request`
/// echoes: as a head's fields are, whatever pieces the connection delivers them in.
@Suite("TestServer request trailers")
struct TestServerRequestTrailerTests {
    private static let head =
        "POST /conformance/request HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nHello\r\n0\r\n"

    /// What the parser made of `pieces`, appended one at a time as reads deliver them: the
    /// trailer fields, or the failure it answered with.
    private func parsed(_ pieces: [String], streamed: Bool) -> Result<[HTTPHeader], ParseFailure> {
        var parser = HTTPRequestParser(peerAddress: "127.0.0.1", streamsBody: { _ in streamed })
        var waiting = pieces[...]
        func feed() -> Bool {
            guard let piece = waiting.popFirst() else { return false }
            parser.append(ArraySlice(piece.utf8))
            return true
        }
        _ = feed()
        while true {
            switch parser.next() {
            case .incomplete: guard feed() else { return .failure(ParseFailure(status: 0)) }
            case .request: return .success([])
            case .failure(let status, _): return .failure(ParseFailure(status: status))
            case .streamingRequest:
                while true {
                    switch parser.nextBodyChunk() {
                    case .data: continue
                    case .incomplete: guard feed() else { return .failure(ParseFailure(status: 0)) }
                    case .end: return .success(parser.streamedTrailers)
                    case .failure(let status, _): return .failure(ParseFailure(status: status))
                    }
                }
            }
        }
    }

    struct ParseFailure: Error, Equatable {
        /// `0`: the parser waited for more than was sent.
        let status: Int
    }

    /// A trailer line past the 4 KiB a chunk-size line may have was refused with 400 "Chunk line
    /// too long" when a read ended inside it, and taken when it came whole.
    @Test(arguments: [true, false])
    func aLongTrailerLineSplitAcrossReadsIsRead(streamed: Bool) throws {
        let line = "X-Checksum: " + String(repeating: "c", count: 5000)
        let pieces = [Self.head + String(line.prefix(4500)), String(line.dropFirst(4500)) + "\r\n\r\n"]
        let trailers = try parsed(pieces, streamed: streamed).get()
        if streamed { #expect(trailers.map(\.name) == ["X-Checksum"]) }
    }

    /// Trailer fields were kept however many came; past a head's 64 KiB they are refused as a
    /// head of that size is.
    @Test(arguments: [true, false])
    func trailerFieldsPastAHeadsLimitAreRefused(streamed: Bool) {
        let lines = (0..<100).map { "X-Filler-\($0): " + String(repeating: "f", count: 1000) + "\r\n" }
        let outcome = parsed([Self.head] + lines + ["\r\n"], streamed: streamed)
        guard case .failure(let failure) = outcome else {
            Issue.record("\((try? outcome.get())?.count ?? 0) trailer fields of 1 KB were taken")
            return
        }
        #expect(failure.status == 431)
    }
}
