import ErrandTestServer
import Foundation
import Testing

@testable import Errand

/// permessage-deflate through the system's zlib: RFC 7692's examples, context takeover, limits.
@Suite("WebSocket compression: permessage-deflate with zlib")
struct PerMessageDeflateTests {
    static func parameters(_ configure: (inout PerMessageDeflateParameters) -> Void = { _ in })
        -> PerMessageDeflateParameters
    {
        var parameters = PerMessageDeflateParameters()
        configure(&parameters)
        return parameters
    }

    @Test func helloCompressesAndDecompressesAsTheRFCShows() throws {
        let deflater = try #require(PerMessageDeflater(Self.parameters()))
        #expect(Array(deflater.deflate(Data("Hello".utf8)) ?? Data()) == [0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00])
        // §7.2.3.2: the second "Hello" refers back to the first.
        #expect(Array(deflater.deflate(Data("Hello".utf8)) ?? Data()) == [0xF2, 0x00, 0x11, 0x00, 0x00])
        let inflater = try #require(PerMessageInflater(Self.parameters()))
        #expect(
            try inflater.inflate(Data([0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00]), limit: 100) == Data("Hello".utf8))
        #expect(try inflater.inflate(Data([0xF2, 0x00, 0x11, 0x00, 0x00]), limit: 100) == Data("Hello".utf8))
        // §7.2.3.3: a stored block, no compression.
        #expect(
            try inflater.inflate(Data([0x00, 0x05, 0x00, 0xFA, 0xFF, 0x48, 0x65, 0x6C, 0x6C, 0x6F, 0x00]), limit: 100)
                == Data("Hello".utf8))
    }

    @Test func noContextTakeoverStartsEveryMessageAfresh() throws {
        let deflater = try #require(PerMessageDeflater(Self.parameters { $0.clientNoContextTakeover = true }))
        let first = try #require(deflater.deflate(Data("Hello".utf8)))
        #expect(deflater.deflate(Data("Hello".utf8)) == first)
        let inflater = try #require(PerMessageInflater(Self.parameters { $0.serverNoContextTakeover = true }))
        for _ in 0..<3 { #expect(try inflater.inflate(first, limit: 100) == Data("Hello".utf8)) }
    }

    @Test(arguments: [8, 9, 12, 15])
    func messagesOfEverySizeRoundTripWithTheAgreedWindow(windowBits: Int) throws {
        let deflater = try #require(PerMessageDeflater(Self.parameters { $0.clientMaxWindowBits = windowBits }))
        let inflater = try #require(PerMessageInflater(Self.parameters()))
        var generator = SystemRandomNumberGenerator()
        for size in [0, 1, 125, 16 << 10, 16 << 10 + 1, 300_000] {
            let text = Self.letters(size, using: &generator)
            let random = TestServer.downloadContent(size: size, version: Int(generator.next() >> 1), range: 0..<size)
            for message in [text, random] {
                let compressed = try #require(deflater.deflate(message))
                #expect(try inflater.inflate(compressed, limit: 1 << 20) == message, "\(size) bytes")
            }
        }
    }

    /// Lower-case letters in runs of about seven, so deflate finds matches but has work to do.
    /// A plain loop: a per-byte `map` takes minutes in a sanitized debug build.
    private static func letters(_ size: Int, using generator: inout some RandomNumberGenerator) -> Data {
        var data = Data(count: size)
        data.withUnsafeMutableBytes { (bytes: UnsafeMutableRawBufferPointer) in
            var index = 0
            while index < size {
                bytes[index] = UInt8(97 + (index / 7 + Int(generator.next() % 2)) % 26)
                index += 1
            }
        }
        return data
    }

    @Test func aSmallPayloadThatInflatesPastTheLimitIsMessageTooBig() throws {
        let deflater = try #require(PerMessageDeflater(Self.parameters()))
        let bomb = try #require(deflater.deflate(Data(count: 1 << 20)))
        #expect(bomb.count < 2000)
        let inflater = try #require(PerMessageInflater(Self.parameters()))
        let refusal = WebSocketProtocolViolation(
            code: .messageTooBig, reason: "a compressed message over the limit of 65536 bytes")
        #expect(throws: refusal) { _ = try inflater.inflate(bomb, limit: 1 << 16) }
        #expect(try inflater.inflate(bomb, limit: 1 << 20).count == 1 << 20)
    }

    @Test func bytesThatAreNotDeflateDataAreAProtocolError() throws {
        let inflater = try #require(PerMessageInflater(Self.parameters()))
        #expect(throws: WebSocketProtocolViolation.self) {
            _ = try inflater.inflate(Data([0xFF, 0xFF, 0xFF]), limit: 100)
        }
    }
}
