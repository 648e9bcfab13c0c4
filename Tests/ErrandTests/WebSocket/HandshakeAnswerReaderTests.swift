import Foundation
import Testing

@testable import Errand

/// The answer to a socket's upgrade request, read as it arrives: bounded, and framed as HTTP says.
@Suite("WebSocket: reading the handshake's answer")
struct HandshakeAnswerReaderTests {
    /// Every event of `answer` fed `pieceSize` bytes at a time, then the connection's end.
    static func events(_ answer: String, pieceSize: Int = 1, closes: Bool = true) throws -> [HandshakeAnswerReader
        .Event]
    {
        var reader = HandshakeAnswerReader()
        var events: [HandshakeAnswerReader.Event] = []
        let bytes = Data(answer.utf8)
        var start = 0
        while start < bytes.count, events.last != .ended, !reader.isUpgraded {
            events += try reader.take(bytes[start..<min(start + pieceSize, bytes.count)])
            start += pieceSize
        }
        if closes, events.last != .ended { events += try reader.takeEnd() }
        return events
    }

    static func body(_ events: [HandshakeAnswerReader.Event]) -> String {
        String(
            decoding: events.reduce(Data()) { if case .body(let bytes) = $1 { $0 + bytes } else { $0 } }, as: UTF8.self)
    }

    @Test(arguments: [1, 7, 4096])
    func a101HandsOverWhatFollowsItsHead(pieceSize: Int) throws {
        let events = try Self.events(
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n\u{1}\u{2}hi",
            pieceSize: pieceSize, closes: false)
        #expect(events.first == .head(statusCode: 101, headers: ["Upgrade": "websocket"]))
        if pieceSize == 4096 { #expect(events.last == .upgraded(Data([0x01, 0x02, 0x68, 0x69]))) }
    }

    @Test(arguments: [1, 5, 4096])
    func aRefusalsBodyEndsAsItIsFramedWithoutTheConnectionClosing(pieceSize: Int) throws {
        let chunked = try Self.events(
            "HTTP/1.1 403 Forbidden\r\nTransfer-Encoding: gzip, chunked\r\n\r\na;x=y\r\nforbidden \r\n5\r\nhere\n\r\n0\r\nA: b\r\n\r\nnext",
            pieceSize: pieceSize, closes: false)
        #expect(chunked.first == .head(statusCode: 403, headers: ["Transfer-Encoding": "gzip, chunked"]))
        #expect(Self.body(chunked) == "forbidden here\n" && chunked.last == .ended)
        let length = try Self.events(
            "HTTP/1.1 401 Unauthorized\r\nContent-Length: 4\r\n\r\nnope, and more", pieceSize: pieceSize, closes: false)
        #expect(Self.body(length) == "nope" && length.last == .ended)
        for status in [204, 304] {
            let empty = try Self.events(
                "HTTP/1.1 \(status) X\r\nContent-Length: 10\r\n\r\n", pieceSize: pieceSize, closes: false)
            #expect(empty.count == 2 && empty.last == .ended)
        }
    }

    @Test func aBodyWithoutFramingEndsWithTheConnection() throws {
        var reader = HandshakeAnswerReader()
        let events = try reader.take(Data("HTTP/1.1 503 Busy\r\n\r\ntry later".utf8))
        #expect(Self.body(events) == "try later" && events.last != .ended)
        #expect(try reader.takeEnd() == [.ended])
    }

    @Test func atMostTheBodyLimitIsKept() throws {
        let body = String(repeating: "x", count: HandshakeAnswerReader.bodyLimit + 10)
        let events = try Self.events("HTTP/1.1 403 No\r\n\r\n" + body, pieceSize: 10_000, closes: false)
        #expect(Self.body(events).utf8.count == HandshakeAnswerReader.bodyLimit && events.last == .ended)
    }

    @Test func aHeadPastItsLimitIsRefusedHoweverItsLinesAreCut() {
        let line = "X-Filler: " + String(repeating: "a", count: 990) + "\r\n"
        let head = "HTTP/1.1 101 Switching Protocols\r\n" + String(repeating: line, count: 400)
        #expect(throws: HandshakeAnswerReader.Failure.badServerResponse) { try Self.events(head, pieceSize: 65536) }
        let oneLine = "HTTP/1.1 101 Switching Protocols\r\nX: " + String(repeating: "a", count: 400 << 10)
        #expect(throws: HandshakeAnswerReader.Failure.badServerResponse) { try Self.events(oneLine, pieceSize: 65536) }
    }

    @Test(arguments: [
        "not HTTP at all\r\n\r\n", "HTTP/1.1 20 OK\r\n\r\n",
        "HTTP/1.1 403 No\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
        "HTTP/1.1 403 No\r\nContent-Length: -1\r\n\r\n",
        "HTTP/1.1 403 No\r\nContent-Length: 99999999999999999999\r\n\r\n",
    ])
    func whatNoServerMaySendIsABadServerResponse(answer: String) {
        #expect(throws: HandshakeAnswerReader.Failure.badServerResponse) { try Self.events(answer, pieceSize: 3) }
    }

    @Test func theChunksBeforeABrokenFramingAreKeptHoweverTheBytesArrive() throws {
        let answer = "HTTP/1.1 403 No\r\nTransfer-Encoding: chunked\r\n\r\na\r\nforbidden \r\n5\r\nhere\n\r\n0ng\r\n"
        for pieceSize in [1, 9, 4096] {
            let events = try Self.events(answer, pieceSize: pieceSize, closes: false)
            #expect(Self.body(events) == "forbidden here\n" && events.last == .ended, "in pieces of \(pieceSize)")
        }
    }

    @Test func aConnectionThatEndsBeforeTheAnswerDoesIsLost() {
        #expect(throws: HandshakeAnswerReader.Failure.connectionLost) { try Self.events("HTTP/1.1 101 Swi") }
        #expect(throws: HandshakeAnswerReader.Failure.connectionLost) {
            try Self.events("HTTP/1.1 403 No\r\nContent-Length: 9\r\n\r\nshort")
        }
    }

    @Test(arguments: ["zz\r\n", "1\r\nab\r\n", "12345678901234567\r\n", String(repeating: "1", count: 5000)])
    func aChunkedFramingNoServerMaySendEndsTheBodyWithWhatCame(framing: String) throws {
        let events = try Self.events(
            "HTTP/1.1 403 No\r\nTransfer-Encoding: chunked\r\n\r\n" + framing, pieceSize: 2, closes: false)
        #expect(events.last == .ended)
        var decoder = ChunkedBodyDecoder()
        _ = decoder.decode(Data(framing.utf8))
        #expect(decoder.isMalformed || !decoder.isComplete)
    }
}
