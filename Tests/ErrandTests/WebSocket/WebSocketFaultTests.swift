import ErrandTestServer
import Foundation
import Testing

@testable import Errand

/// Servers that misbehave, under each transport: every fault gives one clear error and one end.
@Suite("WebSocket: faults")
struct WebSocketFaultTests {
    enum Kind: CaseIterable, Sendable {
        case curl
        /// CurlTransport on the loop of platforms without epoll.
        case curlPollLoop
        #if canImport(FoundationNetworking)
            case urlSession
        #endif
    }

    struct Echo: BaseRequest {
        var query = ""
        var url: String { "/ws/echo" + query }
    }

    /// What each finished task kept of its response.
    final class Finishes: EventMonitor {
        let kept = Locked<[(status: Int, body: String)]>([])

        func request(_ task: RequestTask, didFinish result: Result<Response, ErrandError>) {
            kept.withLock { $0.append((task.responseStatusCode, task.responseString ?? "")) }
        }
    }

    let fixture: PipelineFixture

    init() throws {
        fixture = try PipelineFixture()
    }

    func agent(_ kind: Kind) -> (NetworkAgent, CurlTransport?) {
        switch kind {
        case .curl, .curlPollLoop:
            let transport = CurlTransport(
                configuration: .default, bufferLimit: 1 << 20, calls: .libcurl, watchesSockets: kind == .curl)
            return (fixture.makeAgent(transport: transport), transport)
        #if canImport(FoundationNetworking)
            case .urlSession: return (fixture.makeAgent(transport: URLSessionTransport()), nil)
        #endif
        }
    }

    @Test(arguments: Kind.allCases)
    func aMaskedFrameFromTheServerClosesWith1002(kind: Kind) async throws {
        defer { fixture.server.stop() }
        let socket = try await agent(kind).0.webSocket(Echo(query: "?masked=1"))
        let (messages, error) = await WebSocketTests.drain(socket)
        #expect(messages.isEmpty)
        guard case .webSocketClosed(.protocolError, let reason) = error else {
            Issue.record("ended with \(String(describing: error))")
            return
        }
        #expect(reason.contains("masked"))
        #expect(socket.closeCode == .protocolError)
        let outcome = await Result { () async throws(ErrandError) in try await socket.task.value }
        #expect(throws: ErrandError.self) { try outcome.get() }
    }

    @Test(arguments: Kind.allCases)
    func aDropWithoutACloseFrameIsATransportError(kind: Kind) async throws {
        defer { fixture.server.stop() }
        let socket = try await agent(kind).0.webSocket(Echo(query: "?drop=1"))
        try await socket.send("bye")
        let (_, error) = await WebSocketTests.drain(socket)
        guard case .transport = error else {
            Issue.record("ended with \(String(describing: error))")
            return
        }
        #expect(socket.closeCode == nil)
    }

    @Test(arguments: Kind.allCases)
    func aTrickled16MiBMessageArrivesWholeAndOneByteMoreIsRefused(kind: Kind) async throws {
        defer { fixture.server.stop() }
        let (agent, _) = agent(kind)
        let size = 16 << 20
        let socket = try await agent.webSocket(Echo(query: "?trickle=\(size)"))
        var messages = socket.makeAsyncIterator()
        #expect(try await messages.next() == .binary(TestServer.repeatingPattern(size: size)))
        await socket.close()

        var options = WebSocketOptions()
        options.maximumMessageSize = 1 << 20
        let tooLarge = try await agent.webSocket(Echo(query: "?trickle=\((1 << 20) + 1)"), options: options)
        let (received, error) = await WebSocketTests.drain(tooLarge)
        #expect(received.isEmpty && error == .responseTooLarge(1 << 20))
        #expect(tooLarge.closeCode == .messageTooBig)
    }

    @Test(arguments: Kind.allCases)
    func aFloodWhileTheConsumerWaitsMakesTheServerWait(kind: Kind) async throws {
        defer { fixture.server.stop() }
        let (agent, curl) = agent(kind)
        var options = WebSocketOptions()
        options.maximumMessageSize = 1 << 20
        // Uncompressed, so that 64 MiB of messages are 64 MiB on the wire.
        options.compression = false
        let count = 1024
        let socket = try await agent.webSocket(Echo(query: "?flood=\(count)&size=65536"), options: options)
        // 64 MiB offered; nothing read until the server says it had to wait.
        let blockedAfter = await fixture.server.webSocketFloodBlocked()
        let sent = try #require(blockedAfter, "the server sent all 64 MiB without waiting: nothing pushed back")
        #expect(sent < 32 << 20, "the server got \(sent) bytes out before the client stopped reading")
        var messages = socket.makeAsyncIterator()
        for _ in 0..<count {
            guard case .binary(let data) = try await messages.next(), data.count == 65536 else {
                Issue.record("a flooded message was lost or changed")
                return
            }
        }
        #expect(try await messages.next() == .text("flood done"))
        await socket.close()
        #expect(try await messages.next() == nil)
        if let curl {
            try await eventually { curl.peakBufferedBytes > 0 }
            #expect(curl.peakBufferedBytes <= curl.bufferLimit + (256 << 10))
        }
    }

    @Test(arguments: Kind.allCases)
    func aHandshakeAnswered200_401Or503ThrowsItsStatusAndKeepsItsBody(kind: Kind) async throws {
        defer { fixture.server.stop() }
        let finishes = Finishes()
        fixture.config.addEventMonitor(finishes)
        let (agent, _) = agent(kind)
        for status in [200, 401, 503] {
            await #expect(throws: ErrandError.statusCode(status)) {
                try await agent.webSocket(Echo(query: "?status=\(status)"))
            }
        }
        try await eventually { finishes.kept.withLock { $0.count } == 3 }
        #expect(finishes.kept.withLock { $0.map(\.status) }.sorted() == [200, 401, 503])
        #expect(finishes.kept.withLock { $0.allSatisfy { $0.body == "refused with \($0.status)\n" } })
    }
}
