import Foundation
import Testing

@testable import Errand

/// RFC 6455's message rules: fragments joined around control frames, UTF-8, close frames, limits.
@Suite("WebSocket messages: fragments, UTF-8, close frames and the size limit")
struct WebSocketMessageAssemblerTests {
    typealias Event = WebSocketMessageAssembler.Event

    static func events(_ frames: [WebSocketFrame], limit: Int = 1 << 20) throws(WebSocketProtocolViolation) -> [Event] {
        var assembler = WebSocketMessageAssembler(maximumMessageSize: limit)
        var events: [Event] = []
        for frame in frames {
            if let event = try assembler.receive(frame) { events.append(event) }
        }
        return events
    }

    static func violation(_ frames: [WebSocketFrame], limit: Int = 1 << 20) -> WebSocketProtocolViolation? {
        do {
            _ = try events(frames, limit: limit)
            return nil
        } catch {
            return error
        }
    }

    static func text(_ bytes: [UInt8], final: Bool = true) -> WebSocketFrame {
        WebSocketFrame(opcode: .text, isFinal: final, payload: Data(bytes))
    }

    static func more(_ bytes: [UInt8], final: Bool = true) -> WebSocketFrame {
        WebSocketFrame(opcode: .continuation, isFinal: final, payload: Data(bytes))
    }

    static func close(_ bytes: [UInt8]) -> WebSocketFrame {
        WebSocketFrame(opcode: .close, payload: Data(bytes))
    }

    @Test func fragmentsAreJoinedAroundAPingInTheirMidst() throws {
        let word = Array("κόσμε".utf8)
        let events = try Self.events([
            Self.text(Array(word[..<3]), final: false),
            WebSocketFrame(opcode: .ping, payload: Data("?".utf8)),
            Self.more(Array(word[3..<7]), final: false),
            Self.more(Array(word[7...])),
            WebSocketFrame(opcode: .binary, payload: Data([1, 2])),
        ])
        #expect(events == [.ping(Data("?".utf8)), .message(.text("κόσμε")), .message(.binary(Data([1, 2])))])
    }

    @Test func aContinuationOutsideAMessageOrANewMessageInsideOneIsAProtocolError() {
        #expect(Self.violation([Self.more([0x61])])?.code == .protocolError)
        #expect(Self.violation([Self.text([0x61], final: false), Self.text([0x62])])?.code == .protocolError)
    }

    @Test func invalidUTF8FailsAtTheFragmentHoldingItNotAtTheMessagesEnd() {
        // Autobahn 6.4.1: valid text, then a fragment starting with a code point past U+10FFFF.
        var assembler = WebSocketMessageAssembler(maximumMessageSize: 1 << 20)
        #expect(throws: Never.self) { _ = try assembler.receive(Self.text(Array("κόσμε".utf8), final: false)) }
        #expect(throws: WebSocketProtocolViolation.self) {
            _ = try assembler.receive(Self.more([0xF4, 0x90, 0x80, 0x80], final: false))
        }
        #expect(Self.violation([Self.text([0xCE])])?.code == .invalidFramePayloadData, "cut mid-character")
    }

    @Test func closeFramesGiveTheirCodeAndReasonOrTheRFCsError() throws {
        #expect(try Self.events([Self.close([])]) == [.close(nil, "")])
        #expect(try Self.events([Self.close([0x03, 0xE8] + Array("bye".utf8))]) == [.close(.normalClosure, "bye")])
        #expect(try Self.events([Self.close([0x0B, 0xB8])]) == [.close(WebSocketCloseCode(rawValue: 3000), "")])
        #expect(Self.violation([Self.close([0x03])])?.code == .protocolError)
        for code: UInt16 in [0, 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000, 65535] {
            #expect(
                Self.violation([Self.close([UInt8(code >> 8), UInt8(code & 0xFF)])])?.code == .protocolError, "\(code)")
        }
        #expect(Self.violation([Self.close([0x03, 0xE8, 0xFF])])?.code == .invalidFramePayloadData)
    }

    @Test func aMessageOverTheLimitIsRefusedAsItsFragmentsArrive() {
        let violation = Self.violation([Self.text([0x61, 0x62], final: false), Self.more([0x63])], limit: 2)
        #expect(violation?.code == .messageTooBig)
        #expect(Self.violation([Self.text([0x61, 0x62])], limit: 2) == nil)
    }

    @Test func aCompressedMessageWithoutAnAgreementIsAProtocolError() {
        let frame = WebSocketFrame(opcode: .binary, isCompressed: true, payload: Data([0]))
        #expect(Self.violation([frame])?.code == .protocolError)
    }
}
