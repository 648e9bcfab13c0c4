import Foundation
import Testing

@testable import Errand

@Suite("LineSplitter: LF and CRLF lines, Server-Sent Events line ends, chunk boundaries, the length limit")
struct LineSplitterTests {
    /// What a splitter makes of `chunks`: the lines in order, then the unterminated last one or nil.
    struct Split: Equatable {
        var lines: [String]
        var last: String?
    }

    static func split(_ chunks: [[UInt8]], endsLineOnCarriageReturn: Bool, maximumLineLength: Int = 1 << 20)
        throws(ErrandError) -> Split
    {
        var splitter = LineSplitter(
            maximumLineLength: maximumLineLength, endsLineOnCarriageReturn: endsLineOnCarriageReturn)
        var lines: [String] = []
        for chunk in chunks {
            lines += try splitter.appendDecoding(Data(chunk))
        }
        return Split(lines: lines, last: try splitter.finishDecoding())
    }

    /// `bytes` as one chunk, split in two at every offset, and one byte at a time.
    static func everySplit(of bytes: [UInt8]) -> [[[UInt8]]] {
        var ways: [[[UInt8]]] = [[bytes], bytes.map { [$0] }]
        for offset in 0...bytes.count {
            ways.append([Array(bytes[..<offset]), Array(bytes[offset...])])
        }
        return ways
    }

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    // MARK: lines mode: LF ends a line, CRLF loses its CR, a bare CR stays

    @Test func linesModeEndsAtLineFeedAndDropsTheCarriageReturnOfCRLF() throws {
        let result = try Self.split([Self.bytes("a\nb\r\nc\rd\n\n\r\ne")], endsLineOnCarriageReturn: false)
        #expect(result == Split(lines: ["a", "b", "c\rd", "", ""], last: "e"))
    }

    @Test func linesModeReturnsTheLastLineWithoutNewlineFromFinish() throws {
        #expect(
            try Self.split([Self.bytes("one\ntwo")], endsLineOnCarriageReturn: false)
                == Split(lines: ["one"], last: "two"))
        #expect(
            try Self.split([Self.bytes("one\n")], endsLineOnCarriageReturn: false) == Split(lines: ["one"], last: nil))
        #expect(try Self.split([], endsLineOnCarriageReturn: false) == Split(lines: [], last: nil))
    }

    @Test func linesModeKeepsABareCarriageReturnAtTheEndOfTheStream() throws {
        #expect(try Self.split([Self.bytes("a\r")], endsLineOnCarriageReturn: false) == Split(lines: [], last: "a\r"))
        #expect(
            try Self.split([Self.bytes("a\r"), Self.bytes("b\n")], endsLineOnCarriageReturn: false)
                == Split(lines: ["a\rb"], last: nil))
    }

    @Test func linesModeJoinsACRLFSplitAcrossChunks() throws {
        #expect(
            try Self.split([Self.bytes("a\r"), Self.bytes("\nb")], endsLineOnCarriageReturn: false)
                == Split(lines: ["a"], last: "b"))
        #expect(
            try Self.split([Self.bytes("\r"), Self.bytes("\n")], endsLineOnCarriageReturn: false)
                == Split(lines: [""], last: nil))
    }

    // MARK: Server-Sent Events mode: CRLF, LF or a lone CR

    @Test func eventStreamModeEndsAtCRLFLineFeedOrLoneCarriageReturn() throws {
        let result = try Self.split([Self.bytes("a\rb\nc\r\nd\r\re\n\rf")], endsLineOnCarriageReturn: true)
        #expect(result == Split(lines: ["a", "b", "c", "d", "", "e", ""], last: "f"))
    }

    @Test func eventStreamModeTakesACRLFSplitAcrossChunksAsOneLineEnd() throws {
        #expect(
            try Self.split([Self.bytes("a\r"), Self.bytes("\nb\n")], endsLineOnCarriageReturn: true)
                == Split(lines: ["a", "b"], last: nil))
        // Only the LF right after the CR is swallowed; a second one is an empty line.
        #expect(
            try Self.split([Self.bytes("a\r"), Self.bytes("\n\n")], endsLineOnCarriageReturn: true)
                == Split(lines: ["a", ""], last: nil))
        // Two CRs are two line ends, even split across chunks.
        #expect(
            try Self.split([Self.bytes("a\r"), Self.bytes("\r")], endsLineOnCarriageReturn: true)
                == Split(lines: ["a", ""], last: nil))
        // An empty chunk between the CR and the LF changes nothing.
        #expect(
            try Self.split([Self.bytes("a\r"), [], Self.bytes("\nb\n")], endsLineOnCarriageReturn: true)
                == Split(lines: ["a", "b"], last: nil))
    }

    // MARK: chunk boundaries

    static let fixtures = [
        "a\nb\r\nc\rd\n\n\r\ne",
        "data: one\r\n\r\ndata: two\r\rdata: three\n\n",
        "héllo 🌍\r\nwörld\n日本\r語",
        "\r\n\r\n\r\r\n\n",
        "no line end at all",
    ]

    @Test(arguments: fixtures) func everyChunkingGivesTheSameLinesInLinesMode(_ text: String) throws {
        let expected = try Self.split([Self.bytes(text)], endsLineOnCarriageReturn: false)
        // Split by bytes: as a `Character`, CRLF is one grapheme and never equals "\n".
        let reference = Self.bytes(text).split(separator: 0x0A, omittingEmptySubsequences: false).map {
            String(decoding: $0.last == 0x0D ? $0.dropLast() : $0, as: UTF8.self)
        }
        #expect(expected.lines == Array(reference.dropLast()))
        #expect(expected.last == (reference.last == "" ? nil : reference.last))
        for chunks in Self.everySplit(of: Self.bytes(text)) {
            #expect(try Self.split(chunks, endsLineOnCarriageReturn: false) == expected, "\(chunks)")
        }
    }

    @Test(arguments: fixtures) func everyChunkingGivesTheSameLinesInEventStreamMode(_ text: String) throws {
        let expected = try Self.split([Self.bytes(text)], endsLineOnCarriageReturn: true)
        for chunks in Self.everySplit(of: Self.bytes(text)) {
            #expect(try Self.split(chunks, endsLineOnCarriageReturn: true) == expected, "\(chunks)")
        }
    }

    @Test func eventStreamModeFixtureHasTheExpectedLines() throws {
        #expect(
            try Self.split([Self.bytes(Self.fixtures[1])], endsLineOnCarriageReturn: true)
                == Split(lines: ["data: one", "", "data: two", "", "data: three", ""], last: nil))
        #expect(
            try Self.split([Self.bytes(Self.fixtures[3])], endsLineOnCarriageReturn: true)
                == Split(lines: ["", "", "", "", ""], last: nil))
    }

    @Test func aMultiByteCharacterSplitAcrossChunksDecodesWhole() throws {
        let bytes = Self.bytes("🌍é\n")
        #expect(bytes.count == 7)
        for offset in 1..<6 {
            let chunks = [Array(bytes[..<offset]), Array(bytes[offset...])]
            #expect(try Self.split(chunks, endsLineOnCarriageReturn: false) == Split(lines: ["🌍é"], last: nil))
        }
    }

    @Test func invalidUTF8BecomesReplacementCharacters() throws {
        let result = try Self.split([[0x61, 0xFF, 0x62, 0x0A, 0xE2, 0x82]], endsLineOnCarriageReturn: false)
        #expect(result == Split(lines: ["a\u{FFFD}b"], last: "\u{FFFD}"))
    }

    @Test func rawLinesAreHandedOutWithoutTheirTerminators() throws {
        var splitter = LineSplitter(maximumLineLength: 100, endsLineOnCarriageReturn: false)
        var lines: [[UInt8]] = []
        try splitter.append(Data("ab\r\ncd".utf8)) { (line) throws(ErrandError) in lines.append(Array(line)) }
        try splitter.append(Data("e\n".utf8)) { (line) throws(ErrandError) in lines.append(Array(line)) }
        #expect(lines == [Self.bytes("ab"), Self.bytes("cde")])
        #expect(try splitter.finish() == nil)
    }

    @Test func anErrorFromTheLineHandlerIsThrown() {
        var splitter = LineSplitter(maximumLineLength: 100, endsLineOnCarriageReturn: true)
        #expect(throws: ErrandError.cancelled) {
            try splitter.append(Data("a\nb\n".utf8)) { (_) throws(ErrandError) in throw .cancelled }
        }
    }

    // MARK: the length limit

    @Test func aLineOfExactlyTheLimitPasses() throws {
        for endsLineOnCarriageReturn in [false, true] {
            let line = String(repeating: "x", count: 8)
            // Whole in a chunk, across chunks, and unterminated at the end.
            #expect(
                try Self.split(
                    [Self.bytes(line + "\n")], endsLineOnCarriageReturn: endsLineOnCarriageReturn,
                    maximumLineLength: 8) == Split(lines: [line], last: nil))
            #expect(
                try Self.split(
                    [Self.bytes("xxxxx"), Self.bytes("xxx\r\n")],
                    endsLineOnCarriageReturn: endsLineOnCarriageReturn, maximumLineLength: 8)
                    == Split(lines: [line], last: nil))
            #expect(
                try Self.split(
                    [Self.bytes(line)], endsLineOnCarriageReturn: endsLineOnCarriageReturn,
                    maximumLineLength: 8) == Split(lines: [], last: line))
        }
    }

    @Test func theCarriageReturnOfACRLFDoesNotCountTowardsTheLimit() throws {
        #expect(
            try Self.split(
                [Self.bytes("xxxxxxxx\r"), Self.bytes("\n")], endsLineOnCarriageReturn: false,
                maximumLineLength: 8) == Split(lines: ["xxxxxxxx"], last: nil))
        // At the end of the stream that CR turned out to be part of the line, which is then too long.
        #expect(throws: ErrandError.responseTooLarge(8)) {
            try Self.split([Self.bytes("xxxxxxxx\r")], endsLineOnCarriageReturn: false, maximumLineLength: 8)
        }
        #expect(throws: ErrandError.responseTooLarge(8)) {
            try Self.split(
                [Self.bytes("xxxxxxxx\r"), Self.bytes("y\n")], endsLineOnCarriageReturn: false,
                maximumLineLength: 8)
        }
    }

    @Test func aLineOneByteOverTheLimitThrowsWithoutWaitingForItsEnd() {
        for endsLineOnCarriageReturn in [false, true] {
            for chunks in Self.everySplit(of: Self.bytes("ok\n" + String(repeating: "x", count: 9))) {
                var splitter = LineSplitter(maximumLineLength: 8, endsLineOnCarriageReturn: endsLineOnCarriageReturn)
                // Thrown by `append`, before `finish` is ever reached.
                #expect(throws: ErrandError.responseTooLarge(8)) {
                    for chunk in chunks { _ = try splitter.appendDecoding(Data(chunk)) }
                }
            }
            #expect(throws: ErrandError.responseTooLarge(8)) {
                try Self.split(
                    [Self.bytes("xxxxxxxxx\n")], endsLineOnCarriageReturn: endsLineOnCarriageReturn,
                    maximumLineLength: 8)
            }
        }
    }

    @Test func anEndlessLineFailsAsSoonAsItPassesTheLimitRatherThanBuffering() {
        let chunk = Data(repeating: UInt8(ascii: "x"), count: 64 * 1024)
        let limit = 1 << 20
        for endsLineOnCarriageReturn in [false, true] {
            var splitter = LineSplitter(maximumLineLength: limit, endsLineOnCarriageReturn: endsLineOnCarriageReturn)
            var accepted = 0
            var failure: ErrandError?
            // 10 MiB with no newline: the 17th chunk is the first to take the line past 1 MiB.
            for _ in 0..<160 {
                do throws(ErrandError) {
                    try splitter.append(chunk) { (_) throws(ErrandError) in Issue.record("no line ends here") }
                    accepted += 1
                } catch {
                    failure = error
                    break
                }
            }
            #expect(failure == .responseTooLarge(limit))
            #expect(accepted == 16)
        }
    }
}
