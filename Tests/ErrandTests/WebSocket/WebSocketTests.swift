import ErrandTestServer
import Foundation
import Testing

@testable import Errand

/// WebSockets through the agent against the embedded server: the handshake as a request,
/// messages both ways, pings, and every way a socket ends.
@Suite("WebSocket: through the agent")
struct WebSocketTests {
    let fixture: PipelineFixture
    let agent: NetworkAgent

    init() throws {
        fixture = try PipelineFixture()
        agent = fixture.makeAgent(transport: CurlTransport())
    }

    struct Echo: BaseRequest {
        var query = ""
        var url: String { "/ws/echo" + query }
    }

    /// Every message until the end, and how it ended.
    static func drain(_ socket: WebSocket) async -> ([WebSocketMessage], ErrandError?) {
        var messages: [WebSocketMessage] = []
        do {
            for try await message in socket { messages.append(message) }
            return (messages, nil)
        } catch {
            return (messages, error)
        }
    }

    @Test func messagesGoBothWaysAndTheClientsCloseEndsIterationNormally() async throws {
        defer { fixture.server.stop() }
        let socket = try await agent.webSocket(Echo())
        #expect(socket.response.statusCode == 101)
        #expect(socket.isCompressed, "the embedded server accepts permessage-deflate")
        let big = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try await socket.send("hello")
        try await socket.send(big)
        var iterator = socket.makeAsyncIterator()
        #expect(try await iterator.next() == .text("hello"))
        #expect(try await iterator.next() == .binary(big))
        await socket.close()
        #expect(try await iterator.next() == nil)
        #expect(socket.closeCode == .normalClosure)
        await #expect(throws: ErrandError.self) { try await socket.send("late") }
    }

    /// The socket's bytes are frames: its entry holds its messages, masked, and no body of frames.
    @Test func aRecordedSocketKeepsItsMessagesNotItsFrames() async throws {
        defer { fixture.server.stop() }
        let recorder = HARRecorder(redaction: .default.adding(jsonFields: ["password"]))
        fixture.config.addEventMonitor(recorder)
        let socket = try await fixture.makeAgent(transport: CurlTransport()).webSocket(Echo(query: "?deflate=0"))
        try await socket.send(#"{"password":"hunter2"}"#)
        var iterator = socket.makeAsyncIterator()
        #expect(try await iterator.next() == .text(#"{"password":"hunter2"}"#))
        await socket.close()
        _ = try await socket.task.value

        let har = try JSONSerialization.jsonObject(with: recorder.harData()) as? [String: Any]
        let entries = try #require((har?["log"] as? [String: Any])?["entries"] as? [[String: Any]])
        let entry = try #require(entries.first)
        #expect((entry["_webSocketMessages"] as? [Any])?.count == 2)
        let content = (entry["response"] as? [String: Any])?["content"] as? [String: Any]
        #expect((content?["size"] as? Int ?? 0) == 0, "no frames as the 101's body")
        #expect(!String(decoding: recorder.harData(), as: UTF8.self).contains("hunter2"))
    }

    @Test(arguments: [true, false])
    func messagesOfEverySizeRoundTripWithAndWithoutCompression(compresses: Bool) async throws {
        defer { fixture.server.stop() }
        let socket = try await agent.webSocket(Echo(query: compresses ? "" : "?deflate=0"))
        #expect(socket.isCompressed == compresses)
        let text = String(repeating: "Errand speaks WebSocket. ", count: 40_000)
        let messages: [WebSocketMessage] = [
            .text(""), .binary(Data()), .text("κόσμε"), .text(text), .binary(Data(text.utf8)), .text("last"),
        ]
        for message in messages { try await socket.send(message) }
        var received: [WebSocketMessage] = []
        for try await message in socket {
            received.append(message)
            if received.count == messages.count { break }
        }
        #expect(received == messages)
    }

    @Test func monitorsSeeTheHandshakeAsARequestThatFinishesWhenTheSocketEnds() async throws {
        defer { fixture.server.stop() }
        let monitor = RecordingMonitor()
        fixture.config.addEventMonitor(monitor)
        let socket = try await agent.webSocket(Echo(query: "?send=1"))
        try await eventually { monitor.events.count == 3 }
        #expect(monitor.events == ["start", "send GET /ws/echo", "head 101"])
        var messages = socket.makeAsyncIterator()
        #expect(try await messages.next() == .text("message 1"))
        await socket.close()
        try await monitor.waitForFinish()
        #expect(monitor.events.last == "finish 101")
        #expect(socket.task.error == nil)
    }

    @Test func theServersCloseWithAnApplicationCodeIsThrownWithItsReason() async throws {
        defer { fixture.server.stop() }
        let socket = try await agent.webSocket(Echo(query: "?send=2&close=4001&reason=bye"))
        let (messages, error) = await Self.drain(socket)
        #expect(messages == [.text("message 1"), .text("message 2")])
        #expect(error == .webSocketClosed(code: WebSocketCloseCode(rawValue: 4001), reason: "bye"))
        #expect(socket.closeCode?.rawValue == 4001)
        #expect(socket.closeReason == "bye")
        // The handshake's request fails with it too: monitors hear of it.
        try await eventually { !socket.task.isExecuting }
        #expect(socket.task.error == error)
    }

    @Test func aNormalCloseByTheServerEndsIterationWithoutError() async throws {
        defer { fixture.server.stop() }
        let socket = try await agent.webSocket(Echo(query: "?send=1&close=1000"))
        let (messages, error) = await Self.drain(socket)
        #expect(messages == [.text("message 1")])
        #expect(error == nil)
    }

    @Test func aConnectionDroppedWithoutACloseFrameIsATransportError() async throws {
        defer { fixture.server.stop() }
        let socket = try await agent.webSocket(Echo(query: "?drop=1"))
        try await socket.send("bye")
        let (_, error) = await Self.drain(socket)
        guard case .transport(let failure) = error else {
            Issue.record("ended with \(String(describing: error))")
            return
        }
        #expect(failure.code == .networkConnectionLost)
    }

    @Test func aRefusedHandshakeThrowsItsStatusAndKeepsItsBody() async throws {
        defer { fixture.server.stop() }
        await #expect(throws: ErrandError.statusCode(401)) { try await agent.webSocket(Echo(query: "?status=401")) }
    }

    @Test func aHandshakeAnswered401IsSentAgainAfterOneTokenRefresh() async throws {
        defer { fixture.server.stop() }
        let token = try Token(try await agent.response(LoginApi()))
        let interceptor = AuthenticationInterceptor(
            authenticator: TokenAuthenticator(agent: agent, refreshDelayMilliseconds: 0), credential: token)
        fixture.config.addInterceptor(interceptor)
        fixture.server.expireAccessTokens()
        let socket = try await agent.webSocket(Echo(query: "?auth=1"))
        #expect(fixture.server.refreshCount == 1)
        #expect(interceptor.credential != token)
        try await socket.send("authenticated")
        var messages = socket.makeAsyncIterator()
        #expect(try await messages.next() == .text("authenticated"))
        await socket.close()
    }

    @Test func theSubprotocolIsTheServersChoiceAmongThoseOffered() async throws {
        defer { fixture.server.stop() }
        var options = WebSocketOptions()
        options.subprotocols = ["chat.v2", "chat"]
        let socket = try await agent.webSocket(Echo(), options: options)
        #expect(socket.subprotocol == "chat.v2")
        await socket.close()
        await #expect {
            try await agent.webSocket(Echo(query: "?protocol=mqtt"), options: options)
        } throws: { error in
            guard case .serialization(let reason) = error as? ErrandError else { return false }
            return reason.contains("mqtt")
        }
    }

    @Test func aPingIsAnsweredAndOneWithoutAPongTimesOut() async throws {
        defer { fixture.server.stop() }
        let socket = try await agent.webSocket(Echo())
        let roundTrip = try await socket.ping(Data("are you there".utf8))
        #expect(roundTrip >= 0)

        let silent = try await agent.webSocket(Echo(query: "?pongs=0"))
        async let unanswered = Result { () async throws(ErrandError) in try await silent.ping() }
        // The keep-alive's first wait, then the ping's timeout.
        await fixture.timer.waitForRequests(4)
        fixture.timer.fireAll()
        let outcome = await unanswered
        #expect(throws: ErrandError.timedOut) { try outcome.get() }
        let (_, error) = await Self.drain(silent)
        #expect(error == .timedOut)
        #expect(silent.closeCode == .goingAway)
    }

    @Test func cancellingTheConsumingTaskEndsIterationAndClosesWith1001() async throws {
        defer { fixture.server.stop() }
        let socket = try await agent.webSocket(Echo())
        let reader = Task { await Self.drain(socket) }
        reader.cancel()
        let (messages, error) = await reader.value
        #expect(messages.isEmpty && error == nil)
        try await eventually { socket.closeCode != nil }
        #expect(socket.closeCode == .normalClosure || socket.closeCode == .goingAway)
    }

    #if canImport(FoundationNetworking)
        @Test func urlSessionTransportOpensThemThroughItsOwnCurlTransport() async throws {
            defer { fixture.server.stop() }
            let agent = fixture.makeAgent(transport: URLSessionTransport())
            let socket = try await agent.webSocket(Echo())
            try await socket.send("over libcurl")
            var messages = socket.makeAsyncIterator()
            #expect(try await messages.next() == .text("over libcurl"))
            await socket.close()
            #expect(try await messages.next() == nil)
        }
    #endif

    @Test func anHTTPBaseBecomesWSAndAWSURLIsUsedAsWritten() async throws {
        defer { fixture.server.stop() }
        let socket = try await agent.webSocket(Echo())
        #expect(
            socket.task.transportRequest?.url.absoluteString == fixture.server.baseURL.replacingOccurrences(
                of: "http://", with: "ws://") + "/ws/echo")
        await socket.close()

        struct Absolute: BaseRequest {
            let url: String
        }
        let written =
            fixture.server.baseURL.replacingOccurrences(of: "http://", with: "ws://") + "/ws/echo?send=1&close=1000"
        let direct = try await agent.webSocket(Absolute(url: written))
        #expect(direct.task.transportRequest?.url.absoluteString == written)
        let (messages, error) = await Self.drain(direct)
        #expect(messages.count == 1 && error == nil)
    }

    @Test func cancellingTheSocketsTaskClosesWith1001AndFinishesTheTask() async throws {
        defer { fixture.server.stop() }
        let socket = try await agent.webSocket(Echo())
        socket.task.cancel()
        let (messages, error) = await Self.drain(socket)
        #expect(messages.isEmpty && error == nil, "the closing handshake ends iteration normally")
        #expect(socket.closeCode == .goingAway, "the server echoes the client's 1001")
        let outcome = await Result { () async throws(ErrandError) in try await socket.task.value }
        #expect(throws: ErrandError.cancelled) { try outcome.get() }
    }

    @Test func openSocketsTakeNoneOfTheirHostsConnectionPlaces() async throws {
        defer { fixture.server.stop() }
        struct Quick: BaseRequest {
            var url: String
            var timeoutInterval: TimeInterval { 10 }
        }
        // Twice the transport's six connections per host, then a request to the same host.
        var sockets: [WebSocket] = []
        for _ in 0..<12 { sockets.append(try await agent.webSocket(Quick(url: "/ws/echo"))) }
        let plain = try await agent.response(Quick(url: "/get"))
        #expect(plain.statusCode == 200)
        for (index, socket) in sockets.enumerated() {
            try await socket.send("socket \(index)")
            var messages = socket.makeAsyncIterator()
            #expect(try await messages.next() == .text("socket \(index)"))
            await socket.close()
        }
    }

    @Test func aSocketIsConsumedOnce() async throws {
        defer { fixture.server.stop() }
        let socket = try await agent.webSocket(Echo(query: "?send=2"))
        var first = socket.makeAsyncIterator()
        #expect(try await first.next() != nil)
        var second = socket.makeAsyncIterator()
        await #expect(throws: ErrandError.self) { try await second.next() }
        #expect(try await first.next() != nil, "the first reader keeps reading")
    }
}

extension Result where Failure == ErrandError {
    /// The outcome of an `async` body that throws `ErrandError`.
    init(_ body: () async throws(ErrandError) -> Success) async {
        do {
            self = .success(try await body())
        } catch {
            self = .failure(error)
        }
    }
}
