import Foundation
import Testing

@testable import Errand

@Suite("ServerSentEventParser: the WHATWG event stream rules, chunk boundaries, limits; ServerSentEvent")
struct ServerSentEventParserTests {
    /// What a parser made of a whole stream: its events and the state a reconnect would use.
    struct Outcome: Equatable {
        var events: [ServerSentEvent]
        var lastEventID = ""
        var reconnectionTime: Int?
    }

    static func parse(_ chunks: [[UInt8]], maximumEventSize: Int = 1 << 20) throws(ErrandError) -> Outcome {
        var parser = ServerSentEventParser(maximumEventSize: maximumEventSize)
        var events: [ServerSentEvent] = []
        for chunk in chunks {
            events += try parser.parse(Data(chunk))
        }
        parser.finish()
        return Outcome(events: events, lastEventID: parser.lastEventID, reconnectionTime: parser.reconnectionTime)
    }

    static func parse(_ text: String, maximumEventSize: Int = 1 << 20) throws(ErrandError) -> Outcome {
        try parse([Array(text.utf8)], maximumEventSize: maximumEventSize)
    }

    static func events(_ text: String) throws(ErrandError) -> [ServerSentEvent] {
        try parse(text).events
    }

    // MARK: the specification's examples

    @Test func stockTickerExampleJoinsDataLinesWithLineFeeds() throws {
        #expect(try Self.events("data: YHOO\ndata: +2\ndata: 10\n\n") == [ServerSentEvent(data: "YHOO\n+2\n10")])
    }

    @Test func commentIdAndSpaceExample() throws {
        let stream = ": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n"
        #expect(
            try Self.parse(stream)
                == Outcome(
                    events: [
                        ServerSentEvent(id: "1", data: "first event"),
                        // `id` with no colon sets an empty id, which resets the last event ID.
                        ServerSentEvent(id: "", data: "second event"),
                        // Only one space after the colon is removed.
                        ServerSentEvent(data: " third event"),
                    ], lastEventID: ""))
    }

    @Test func fieldsWithoutColonsExample() throws {
        // The last block never gets its blank line, so it is discarded.
        #expect(
            try Self.events("data\n\ndata\ndata\n\ndata:") == [ServerSentEvent(data: ""), ServerSentEvent(data: "\n")])
    }

    @Test func spaceAfterTheColonIsOptionalExample() throws {
        #expect(
            try Self.events("data:test\n\ndata: test\n\n") == [
                ServerSentEvent(data: "test"), ServerSentEvent(data: "test"),
            ])
    }

    // MARK: lines and fields

    @Test func commentLinesAreIgnoredAnywhere() throws {
        #expect(try Self.events(":hello\ndata: a\n: in the middle\ndata: b\n:\n\n") == [ServerSentEvent(data: "a\nb")])
        // A block of comments alone dispatches nothing.
        #expect(try Self.events(": keep-alive\n\n") == [])
    }

    @Test func valuesKeepColonsAndAllButOneLeadingSpace() throws {
        #expect(try Self.events("data: a: b:c\n\n") == [ServerSentEvent(data: "a: b:c")])
        #expect(try Self.events("data:\n\n") == [ServerSentEvent(data: "")])
        #expect(try Self.events("data: \n\n") == [ServerSentEvent(data: "")])
        #expect(try Self.events("data:   \n\n") == [ServerSentEvent(data: "  ")])
        #expect(try Self.events("data: trailing \n\n") == [ServerSentEvent(data: "trailing ")])
    }

    @Test func eventFieldNamesTheTypeForOneEventOnly() throws {
        #expect(
            try Self.events("event: add\ndata: 1\n\ndata: 2\n\nevent:\ndata: 3\n\nevent\ndata: 4\n\n")
                == [
                    ServerSentEvent(event: "add", data: "1"), ServerSentEvent(data: "2"), ServerSentEvent(data: "3"),
                    ServerSentEvent(data: "4"),
                ])
        // The last `event` field of a block wins, and a block without data resets it.
        #expect(
            try Self.events("event: a\nevent: b\ndata: x\n\nevent: lost\n\ndata: y\n\n")
                == [ServerSentEvent(event: "b", data: "x"), ServerSentEvent(data: "y")])
    }

    @Test func unknownFieldsAreIgnored() throws {
        #expect(try Self.events("foo: bar\ndata: x\nbaz\n\n") == [ServerSentEvent(data: "x")])
        #expect(try Self.events("foo: bar\n\n") == [])
    }

    @Test func fieldNamesAreCaseSensitive() throws {
        #expect(
            try Self.parse("Data: x\n\nID: 7\nEvent: e\nRETRY: 5\ndata: y\n\n")
                == Outcome(events: [ServerSentEvent(data: "y")]))
    }

    @Test func fieldNamesMustMatchExactly() throws {
        #expect(try Self.events("dat: x\ndata : y\n datas: z\ndata: ok\n\n") == [ServerSentEvent(data: "ok")])
        #expect(try Self.parse("i: 1\nids: 2\ndata: x\n\n") == Outcome(events: [ServerSentEvent(data: "x")]))
    }

    // MARK: id

    @Test func idIsTheBlocksOwnAndLastEventIDCarriesOver() throws {
        let outcome = try Self.parse("id: 1\ndata: a\n\ndata: b\n\nid: 2\nid: 3\ndata: c\n\n")
        #expect(
            outcome
                == Outcome(
                    events: [
                        ServerSentEvent(id: "1", data: "a"), ServerSentEvent(data: "b"),
                        ServerSentEvent(id: "3", data: "c"),
                    ], lastEventID: "3"))
    }

    @Test func lastEventIDIsTakenFromEachBlankLine() throws {
        var parser = ServerSentEventParser(maximumEventSize: 1024)
        #expect(parser.lastEventID == "")
        #expect(try parser.parse(Data("id: 1\ndata: a\n".utf8)) == [])
        // Not yet: the block has not ended.
        #expect(parser.lastEventID == "")
        #expect(
            try parser.parse(Data("\ndata: b\n\n".utf8)) == [
                ServerSentEvent(id: "1", data: "a"), ServerSentEvent(data: "b"),
            ])
        #expect(parser.lastEventID == "1")
    }

    @Test func aBlockWithAnIdAndNoDataDispatchesNothingButSetsLastEventID() throws {
        #expect(try Self.parse("id: 42\n\n") == Outcome(events: [], lastEventID: "42"))
        // Its id is not carried into the next event's own `id`.
        #expect(
            try Self.parse("id: 42\n\ndata: x\n\n") == Outcome(events: [ServerSentEvent(data: "x")], lastEventID: "42"))
    }

    @Test func anIdContainingNullIsIgnored() throws {
        #expect(
            try Self.parse("id: 1\ndata: a\n\nid: 2\u{0}3\ndata: b\n\n")
                == Outcome(events: [ServerSentEvent(id: "1", data: "a"), ServerSentEvent(data: "b")], lastEventID: "1"))
        // A valid id earlier in the same block stands.
        #expect(
            try Self.parse("id: 5\nid: \u{0}\ndata: c\n\n")
                == Outcome(events: [ServerSentEvent(id: "5", data: "c")], lastEventID: "5"))
    }

    @Test func anEmptyIdResetsLastEventID() throws {
        #expect(
            try Self.parse("id: 1\ndata: a\n\nid:\ndata: b\n\n")
                == Outcome(
                    events: [ServerSentEvent(id: "1", data: "a"), ServerSentEvent(id: "", data: "b")], lastEventID: ""))
    }

    // MARK: retry

    @Test func retryWithDigitsSetsTheReconnectionTimeAndTheEventsRetry() throws {
        #expect(
            try Self.parse("retry: 3000\ndata: a\n\ndata: b\n\n")
                == Outcome(
                    events: [ServerSentEvent(data: "a", retry: 3000), ServerSentEvent(data: "b")],
                    reconnectionTime: 3000))
        #expect(
            try Self.parse("retry:0\ndata: a\n\n")
                == Outcome(events: [ServerSentEvent(data: "a", retry: 0)], reconnectionTime: 0))
    }

    @Test func aRetryOnlyBlockDispatchesNothingButSetsTheReconnectionTime() throws {
        #expect(try Self.parse("retry: 1500\n\n") == Outcome(events: [], reconnectionTime: 1500))
        #expect(
            try Self.parse("retry: 1500\n\ndata: x\n\n")
                == Outcome(events: [ServerSentEvent(data: "x")], reconnectionTime: 1500))
    }

    @Test(arguments: ["1.5", "abc", "", " 5", "5 ", "-1", "+1", "1e3", "١٢", "99999999999999999999999"])
    func retryOtherThanDigitsIsIgnored(_ value: String) throws {
        #expect(
            try Self.parse("retry: 700\n\nretry: \(value)\ndata: x\n\n")
                == Outcome(events: [ServerSentEvent(data: "x")], reconnectionTime: 700))
    }

    @Test func theLargestRetryThatFitsIsKept() throws {
        #expect(try Self.parse("retry: \(Int.max)\n\n") == Outcome(events: [], reconnectionTime: Int.max))
    }

    // MARK: the end of the stream

    @Test func aStreamCutMidEventYieldsNothingForThatEvent() throws {
        #expect(try Self.parse("data: a\n\ndata: b\n") == Outcome(events: [ServerSentEvent(data: "a")]))
        #expect(try Self.parse("data: a\n\ndata: b") == Outcome(events: [ServerSentEvent(data: "a")]))
        #expect(try Self.parse("data: a\n\ndata: b\r") == Outcome(events: [ServerSentEvent(data: "a")]))
        // The unfinished block's id never reaches lastEventID.
        #expect(
            try Self.parse("id: 1\ndata: a\n\nid: 2\ndata: b\n")
                == Outcome(events: [ServerSentEvent(id: "1", data: "a")], lastEventID: "1"))
    }

    @Test func finishStartsANewStreamAndKeepsWhatAReconnectNeeds() throws {
        var parser = ServerSentEventParser(maximumEventSize: 1024)
        #expect(try parser.parse(Data("id: 7\nretry: 10\ndata: a\n\nevent: e\ndata: lost\n".utf8)).count == 1)
        parser.finish()
        #expect(parser.lastEventID == "7")
        #expect(parser.reconnectionTime == 10)
        // Nothing of the discarded block leaks into the next stream, whose byte order mark is skipped again.
        #expect(try parser.parse(Data("\u{FEFF}data: b\n\n".utf8)) == [ServerSentEvent(data: "b")])
    }

    // MARK: line ends

    @Test func carriageReturnLineFeedAndCRLFEndLinesAlike() throws {
        let expected = [ServerSentEvent(id: "1", event: "e", data: "a\nb\nc")]
        #expect(try Self.events("id: 1\revent: e\rdata: a\rdata: b\rdata: c\r\r") == expected)
        #expect(try Self.events("id: 1\r\nevent: e\r\ndata: a\r\ndata: b\r\ndata: c\r\n\r\n") == expected)
        #expect(try Self.events("id: 1\nevent: e\ndata: a\ndata: b\ndata: c\n\n") == expected)
        #expect(try Self.events("id: 1\revent: e\r\ndata: a\ndata: b\r\ndata: c\n\r") == expected)
    }

    @Test func aCRLFSplitAcrossChunksIsOneLineEnd() throws {
        // Were the LF a line of its own, "a" would be dispatched alone.
        let chunks = [Array("data: a\r".utf8), Array("\ndata: b\r".utf8), Array("\n\r".utf8), Array("\n".utf8)]
        #expect(try Self.parse(chunks) == Outcome(events: [ServerSentEvent(data: "a\nb")]))
    }

    // MARK: byte order mark

    @Test func aLeadingByteOrderMarkIsSkipped() throws {
        #expect(try Self.events("\u{FEFF}data: x\n\n") == [ServerSentEvent(data: "x")])
        let bytes = Array("\u{FEFF}data: x\n\n".utf8)
        for offset in 1...3 {
            #expect(
                try Self.parse([Array(bytes[..<offset]), Array(bytes[offset...])]).events == [
                    ServerSentEvent(data: "x")
                ])
        }
        #expect(try Self.parse(bytes.map { [$0] }).events == [ServerSentEvent(data: "x")])
    }

    @Test func onlyTheFirstByteOrderMarkIsSkipped() throws {
        // A second one becomes part of the field name, which is then unknown.
        #expect(try Self.events("\u{FEFF}\u{FEFF}data: x\n\n") == [])
        #expect(try Self.events("data: a\n\n\u{FEFF}data: b\n\n") == [ServerSentEvent(data: "a")])
        #expect(try Self.events("data: \u{FEFF}a\n\n") == [ServerSentEvent(data: "\u{FEFF}a")])
    }

    @Test func thePrefixOfAByteOrderMarkIsKeptAsData() throws {
        let bytes: [UInt8] = [0xEF, 0xBB] + Array("data: x\n\ndata: y\n\n".utf8)
        // The two bytes make the first field name "\u{FFFD}data", which is unknown.
        #expect(try Self.parse([bytes]).events == [ServerSentEvent(data: "y")])
        #expect(try Self.parse(bytes.map { [$0] }).events == [ServerSentEvent(data: "y")])
        #expect(try Self.parse([[0xEF], [0xBB], Array(bytes[2...])]).events == [ServerSentEvent(data: "y")])
        #expect(
            try Self.parse([[0xEF, 0xBB, 0x0A, 0x0A]] + [Array("data: z\n\n".utf8)]).events == [
                ServerSentEvent(data: "z")
            ])
    }

    // MARK: UTF-8

    @Test func aMultiByteCharacterSplitAcrossChunksDecodesWhole() throws {
        let bytes = Array("event: ü\ndata: 🌍\n\n".utf8)
        let emoji = bytes.firstIndex(of: 0xF0) ?? 0
        for offset in [emoji + 1, emoji + 2, emoji + 3, 8, 9] {
            #expect(
                try Self.parse([Array(bytes[..<offset]), Array(bytes[offset...])]).events
                    == [ServerSentEvent(event: "ü", data: "🌍")], "split at \(offset)")
        }
    }

    @Test func invalidUTF8BecomesReplacementCharacters() throws {
        let bytes: [UInt8] = Array("id: ".utf8) + [0xC3] + Array("\ndata: a".utf8) + [0xFF] + Array("\n\n".utf8)
        #expect(
            try Self.parse([bytes])
                == Outcome(events: [ServerSentEvent(id: "\u{FFFD}", data: "a\u{FFFD}")], lastEventID: "\u{FFFD}"))
    }

    // MARK: chunk boundaries

    static let fixtures = [
        "data: YHOO\ndata: +2\ndata: 10\n\n",
        ": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n",
        "data\n\ndata\ndata\n\ndata:",
        "\u{FEFF}id: 1\r\nevent: ä\r\ndata: 🌍 a\r\n\r\nretry: 20\rdata: b\r\rid: 3\nretry: x\n\n: c\r\n",
        "retry: 5\n\nid: é\n\ndata: x\ndata\r\n\r\nid\ndata:\n\n",
    ]

    @Test(arguments: fixtures.indices) func everyChunkingGivesTheSameEvents(_ fixture: Int) throws {
        let bytes = Array(Self.fixtures[fixture].utf8)
        let expected = try Self.parse([bytes])
        #expect(expected == Self.fixtureOutcomes[fixture])
        for offset in 0...bytes.count {
            #expect(
                try Self.parse([Array(bytes[..<offset]), Array(bytes[offset...])]) == expected, "split at \(offset)")
        }
        #expect(try Self.parse(bytes.map { [$0] }) == expected, "one byte at a time")
    }

    static let fixtureOutcomes = [
        Outcome(events: [ServerSentEvent(data: "YHOO\n+2\n10")]),
        Outcome(
            events: [
                ServerSentEvent(id: "1", data: "first event"), ServerSentEvent(id: "", data: "second event"),
                ServerSentEvent(data: " third event"),
            ]),
        Outcome(events: [ServerSentEvent(data: ""), ServerSentEvent(data: "\n")]),
        Outcome(
            events: [
                ServerSentEvent(id: "1", event: "ä", data: "🌍 a"), ServerSentEvent(data: "b", retry: 20),
            ], lastEventID: "3", reconnectionTime: 20),
        Outcome(
            events: [ServerSentEvent(data: "x\n"), ServerSentEvent(id: "", data: "")], lastEventID: "",
            reconnectionTime: 5),
    ]

    // MARK: limits

    @Test func aLineLongerThanTheMaximumEventSizeThrows() throws {
        let line = "data: " + String(repeating: "x", count: 10)
        #expect(try Self.parse(line + "\n\n", maximumEventSize: 16).events == [ServerSentEvent(data: "xxxxxxxxxx")])
        #expect(throws: ErrandError.responseTooLarge(15)) { try Self.parse(line + "\n\n", maximumEventSize: 15) }
        // Without a line end it throws as soon as the line passes the limit.
        var parser = ServerSentEventParser(maximumEventSize: 15)
        #expect(throws: ErrandError.responseTooLarge(15)) { try parser.parse(Data(line.utf8)) }
        // Comments count too: the limit bounds memory, not events.
        #expect(throws: ErrandError.responseTooLarge(15)) {
            try Self.parse(":" + String(repeating: "c", count: 15) + "\n", maximumEventSize: 15)
        }
    }

    @Test func dataGatheredPastTheMaximumEventSizeThrows() throws {
        // Three lines of four bytes make "xxxx\nxxxx\nxxxx", 14 bytes.
        let block = String(repeating: "data: xxxx\n", count: 3) + "\n"
        #expect(try Self.parse(block, maximumEventSize: 14).events == [ServerSentEvent(data: "xxxx\nxxxx\nxxxx")])
        #expect(throws: ErrandError.responseTooLarge(13)) { try Self.parse(block, maximumEventSize: 13) }
        // Each event is measured on its own.
        #expect(try Self.parse(block + block, maximumEventSize: 14).events.count == 2)
    }

    @Test func eachEventCarriesTheStreamsStateAsOfItsDispatch() throws {
        var parser = ServerSentEventParser(maximumEventSize: 1024)
        let dispatched = try parser.parseDispatched(
            Data("id: 1\nretry: 10\ndata: a\n\nid: 7\nretry: 20\n\ndata: b\n\nid: 8\ndata: c\n\nid: 9\n\n".utf8))
        #expect(dispatched.map(\.event.data) == ["a", "b", "c"])
        #expect(dispatched.map(\.lastEventID) == ["1", "7", "8"])
        #expect(dispatched.map(\.reconnectionTime) == [10, 20, 20])
        #expect(parser.lastEventID == "9")
    }

    // MARK: ServerSentEvent

    struct Token: Decodable, Equatable {
        let n: Int
        let text: String
    }

    @Test func eventDefaultsAreAMessageWithoutIdOrRetry() {
        let event = ServerSentEvent(data: "x")
        #expect(event.id == nil)
        #expect(event.event == "message")
        #expect(event.data == "x")
        #expect(event.retry == nil)
    }

    @Test func decodeReadsTheDataAsJSON() throws {
        let event = ServerSentEvent(data: #"{"n":1,"text":"hé"}"#)
        #expect(try event.decode(Token.self) == Token(n: 1, text: "hé"))
    }

    @Test func decodeFailureNamesTheTypeAndPathAsResponseDoes() throws {
        let json = #"{"n":"one","text":"x"}"#
        var thrown: ErrandError?
        do throws(ErrandError) {
            _ = try ServerSentEvent(data: json).decode(Token.self)
        } catch {
            thrown = error
        }
        guard case .decoding(let message) = thrown else {
            Issue.record("expected .decoding, got \(String(describing: thrown))")
            return
        }
        #expect(message.hasPrefix("Token: $.n: expected Int"), "\(message)")
        #expect(throws: ErrandError.decoding(message)) {
            try Response(statusCode: 200, data: Data(json.utf8)).decode(Token.self)
        }
        #expect(throws: ErrandError.decoding("Token: $: The given data was not valid JSON.")) {
            try ServerSentEvent(data: "not json").decode(Token.self)
        }
    }
}
