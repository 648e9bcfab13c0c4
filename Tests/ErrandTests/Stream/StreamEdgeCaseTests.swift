import Foundation
import Testing

@testable import Errand

/// Counts an accessory's calls, to check a stream's task calls back once.
final class CountingAccessory: RequestAccessory {
    private let counts = Locked([0, 0, 0])

    /// Starts, will-stops and did-stops so far.
    var calls: [Int] { counts[\.self] }

    func requestWillStart(_ task: RequestTask) { counts.withLock { $0[0] += 1 } }
    func requestWillStop(_ task: RequestTask) { counts.withLock { $0[1] += 1 } }
    func requestDidStop(_ task: RequestTask) { counts.withLock { $0[2] += 1 } }
}

/// Bodies cut where no server would cut them on purpose, fed chunk by chunk through a transport
/// the test drives.
@Suite("Response streams: cut bodies, callbacks, lifetimes")
struct StreamEdgeCaseTests {
    let transport = ManualTransport()
    let agent: NetworkAgent

    init() {
        agent = .testing(transport)
    }

    /// Opens a stream and returns it with the transport's side of the exchange.
    func open(_ request: StreamApi = StreamApi(url: "/feed")) async throws -> (ResponseStream, ManualTransport.Sent) {
        async let opening = agent.stream(request)
        let sent = try #require(await transport.sent(count: 1)?.first)
        sent.events(.responseHead(statusCode: 200, headers: ["Content-Type": "text/event-stream"]))
        return (try await opening, sent)
    }

    @Test func aBodyCutMidLineAndMidCharacterYieldsTheWholeLinesThenTheError() async throws {
        let (stream, sent) = try await open()
        sent.events(.body(Data("one\ntw".utf8)))
        sent.events(.body(Data([0xC3])))  // The first half of "é".
        sent.events(.completed(.transport(URLError(.networkConnectionLost))))
        var lines: [String] = []
        await #expect(throws: ErrandError.transport(URLError(.networkConnectionLost))) {
            for try await line in stream.lines { lines.append(line) }
        }
        #expect(lines == ["one"])
    }

    @Test func aBodyEndedMidCharacterYieldsItsLastLineWithAReplacementCharacter() async throws {
        let (stream, sent) = try await open()
        sent.events(.body(Data("caf".utf8) + Data([0xC3])))
        sent.events(.completed(nil))
        var lines: [String] = []
        for try await line in stream.lines { lines.append(line) }
        #expect(lines == ["caf\u{FFFD}"])
    }

    @Test func anEventCutMidwayIsNotYieldedAndTheErrorIs() async throws {
        let (stream, sent) = try await open()
        sent.events(.body(Data("data: whole\n\ndata: hal".utf8)))
        sent.events(.body(Data("f\nretry: soon\n".utf8)))
        sent.events(.completed(.transport(URLError(.networkConnectionLost))))
        var events: [ServerSentEvent] = []
        await #expect(throws: ErrandError.transport(URLError(.networkConnectionLost))) {
            for try await event in stream.events { events.append(event) }
        }
        #expect(events == [ServerSentEvent(data: "whole")])
    }

    @Test func aStreamsTaskCallsBackOnceWhenItEnds() async throws {
        let accessory = CountingAccessory()
        let (stream, sent) = try await open(StreamApi(url: "/feed", requestAccessories: [accessory]))
        #expect(accessory.calls == [1, 0, 0])
        sent.events(.body(Data("data: 1\n\n".utf8)))
        sent.events(.completed(nil))
        _ = try await stream.collect(upTo: 100)
        stream.cancel()
        try await eventually { accessory.calls == [1, 1, 1] }
        #expect(stream.task.error == nil)
    }

    @Test func aCancelledStreamsTaskCallsBackOnceWithCancelled() async throws {
        let accessory = CountingAccessory()
        let (stream, sent) = try await open(StreamApi(url: "/feed", requestAccessories: [accessory]))
        stream.cancel()
        stream.cancel()
        try await eventually { accessory.calls == [1, 1, 1] }
        #expect(stream.task.error == .cancelled)
        #expect(sent.cancelled)
    }
}
