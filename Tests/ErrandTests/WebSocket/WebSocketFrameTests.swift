import Foundation
import Testing

@testable import Errand

/// Frames as RFC 6455 §5 lays them out, read from a server and written by a client.
@Suite("WebSocket frames: encoding, decoding in pieces, and what a client must refuse")
struct WebSocketFrameTests {
    /// Reads every whole frame in `bytes`, fed `piece` bytes at a time.
    static func frames(_ bytes: [UInt8], piece: Int = .max, compression: Bool = false, limit: Int = 1 << 20)
        throws(WebSocketProtocolViolation) -> [WebSocketFrame]
    {
        var decoder = WebSocketFrameDecoder(maximumPayload: limit, allowsCompression: compression)
        var frames: [WebSocketFrame] = []
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + piece)
            decoder.append(Data(bytes[offset..<end]))
            offset = end
            while let frame = try decoder.nextFrame() { frames.append(frame) }
        }
        return frames
    }

    static func violation(_ bytes: [UInt8], compression: Bool = false, limit: Int = 1 << 20)
        -> WebSocketProtocolViolation?
    {
        do {
            _ = try frames(bytes, compression: compression, limit: limit)
            return nil
        } catch {
            return error
        }
    }

    @Test func aMaskedHelloIsTheRFCsExample() {
        let frame = WebSocketFrame(opcode: .text, payload: Data("Hello".utf8))
        let encoded = frame.encoded(maskingKey: 0x37FA_213D)
        #expect(Array(encoded) == [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58])
    }

    @Test(arguments: [(125, 2), (126, 4), (65_535, 4), (65_536, 10)])
    func theLengthTakesTheShortestForm(length: Int, headerLength: Int) {
        let encoded = WebSocketFrame(opcode: .binary, payload: Data(count: length)).encoded(maskingKey: 0x0102_0304)
        #expect(encoded.count == headerLength + 4 + length)
        #expect(encoded[1] & 0x80 != 0, "a client masks every frame")
    }

    @Test func theRFCsUnmaskedExamplesDecodeWholeOrByteByByte() throws {
        let bytes: [UInt8] =
            [0x81, 0x05] + Array("Hello".utf8)  // a single unmasked text frame
            + [0x01, 0x03] + Array("Hel".utf8) + [0x80, 0x02] + Array("lo".utf8)  // fragmented
            + [0x89, 0x05] + Array("Hello".utf8)  // a ping
            + [0x82, 0x7E, 0x01, 0x00] + [UInt8](repeating: 7, count: 256)
            + [0x82, 0x7F, 0, 0, 0, 0, 0, 1, 0, 0] + [UInt8](repeating: 9, count: 65_536)
        let expected = [
            WebSocketFrame(opcode: .text, payload: Data("Hello".utf8)),
            WebSocketFrame(opcode: .text, isFinal: false, payload: Data("Hel".utf8)),
            WebSocketFrame(opcode: .continuation, payload: Data("lo".utf8)),
            WebSocketFrame(opcode: .ping, payload: Data("Hello".utf8)),
            WebSocketFrame(opcode: .binary, payload: Data(repeating: 7, count: 256)),
            WebSocketFrame(opcode: .binary, payload: Data(repeating: 9, count: 65_536)),
        ]
        #expect(try Self.frames(bytes) == expected)
        #expect(try Self.frames(bytes, piece: 1) == expected)
        #expect(try Self.frames(bytes, piece: 1000) == expected)
    }

    @Test func aCompressedFirstFrameKeepsRSV1WhenCompressionWasAgreed() throws {
        let frames = try Self.frames([0xC1, 0x01, 0x00], compression: true)
        #expect(frames.first?.isCompressed == true)
    }

    @Test(
        arguments: [
            ([0x81, 0x85, 1, 2, 3, 4, 0, 0, 0, 0, 0], "masked"),
            ([0xA1, 0x00], "RSV2"),
            ([0x91, 0x00], "RSV2 or RSV3"),
            ([0xC1, 0x00], "without agreeing"),
            ([0x83, 0x00], "reserved opcode 3"),
            ([0x8B, 0x00], "reserved opcode 11"),
            ([0x09, 0x00], "fragmented a ping"),
            ([0x89, 0x7E, 0x00, 0x7E], "at most 125"),
            ([0x82, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 0], "top bit"),
        ] as [([UInt8], String)])
    func aFrameBreakingTheRulesIsAProtocolError(bytes: [UInt8], saying: String) {
        let violation = Self.violation(bytes)
        #expect(violation?.code == .protocolError)
        #expect(violation?.reason.contains(saying) == true, "\(String(describing: violation))")
    }

    @Test func rsv1OnAControlOrContinuationFrameIsAnErrorEvenWithCompression() {
        #expect(Self.violation([0xC9, 0x00], compression: true)?.code == .protocolError)
        #expect(Self.violation([0xC0, 0x00], compression: true)?.code == .protocolError)
    }

    @Test func aFrameOverTheLimitIsRefusedFromItsHeaderAlone() {
        let violation = Self.violation([0x82, 0x7F, 0, 0, 0, 0, 0x10, 0, 0, 0], limit: 1 << 20)
        #expect(violation?.code == .messageTooBig)
    }

    @Test func aCloseReasonIsCutToFitAtACharacterBoundary() {
        let payload = WebSocketFrame.closePayload(.goingAway, reason: String(repeating: "é", count: 100))
        #expect(payload.count == 124)
        #expect(Array(payload.prefix(2)) == [0x03, 0xE9])
        #expect(WebSocketFrame.closePayload(nil, reason: "ignored").isEmpty)
    }

    @Test func sha1AndTheAcceptKeyMatchTheirStandardsExamples() {
        let hex = { (bytes: [UInt8]) in bytes.map { String(format: "%02x", $0) }.joined() }
        #expect(hex(SHA1.digest(Array("abc".utf8))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(hex(SHA1.digest([UInt8]())) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        let twoBlocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
        #expect(hex(SHA1.digest(Array(twoBlocks.utf8))) == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
        #expect(WebSocketHandshake.acceptValue(for: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test func utf8IsCheckedPieceByPiece() {
        var validator = UTF8Validator()
        let word = Array("κόσμε".utf8)
        let firstPiece = validator.consume(word[..<3])
        #expect(firstPiece && !validator.isAtBoundary)
        let rest = validator.consume(word[3...])
        #expect(rest && validator.isAtBoundary)
        for invalid: [UInt8] in [[0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xFF], [0x80]] {
            var fresh = UTF8Validator()
            let isValid = fresh.consume(invalid)
            #expect(!isValid, "\(invalid)")
        }
        var astral = UTF8Validator()
        let isValid = astral.consume(Array("𝄞".utf8))
        #expect(isValid && astral.isAtBoundary)
    }
}
