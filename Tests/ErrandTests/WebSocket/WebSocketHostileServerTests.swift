import ErrandTestServer
import Foundation
import Testing

@testable import Errand

/// A hostile server and a careless caller: every header a server sends ends in a clear error,
/// every option a caller sets is checked, and every wait on a socket ends when the socket does.
@Suite("WebSocket: hostile servers and callers")
struct WebSocketHostileServerTests {
    typealias Kind = WebSocketFaultTests.Kind

    struct Echo: BaseRequest {
        var query = ""
        var timeoutInterval: TimeInterval = 30
        var url: String { "/ws/echo" + query }
    }

    struct Fault: BaseRequest {
        let kind: String
        var timeoutInterval: TimeInterval = 30
        var url: String { "/ws/fault/" + kind }
    }

    struct Get: BaseRequest {
        var url = "/get"
        var timeoutInterval: TimeInterval { 30 }
    }

    let fixture: PipelineFixture

    init() throws {
        fixture = try PipelineFixture()
    }

    /// An agent of `kind` whose socket timers run on the clock.
    func realTimeAgent(_ kind: Kind, connection: ConnectionOptions = .init()) -> NetworkAgent {
        switch kind {
        case .curl, .curlPollLoop:
            let transport = CurlTransport(
                configuration: .default, connection: connection, bufferLimit: 1 << 20, calls: .libcurl,
                watchesSockets: kind == .curl)
            return NetworkAgent(config: fixture.config, transport: transport)
        #if canImport(FoundationNetworking)
            case .urlSession: return NetworkAgent(config: fixture.config, transport: URLSessionTransport())
        #endif
        }
    }

    /// An agent of `kind` whose socket timers fire when the test says (``PipelineFixture/timer``).
    func manualTimeAgent(_ kind: Kind) -> NetworkAgent {
        switch kind {
        case .curl, .curlPollLoop:
            return fixture.makeAgent(
                transport: CurlTransport(
                    configuration: .default, bufferLimit: 1 << 20, calls: .libcurl, watchesSockets: kind == .curl))
        #if canImport(FoundationNetworking)
            case .urlSession: return fixture.makeAgent(transport: URLSessionTransport())
        #endif
        }
    }

    /// How the socket's task ended.
    static func end(of socket: WebSocket) async -> Result<Response, ErrandError> {
        await Result { () async throws(ErrandError) in try await socket.task.value }
    }

    // MARK: 1. The handshake's answer

    @Test(arguments: [
        "permessage-deflate; =", "permessage-deflate; ; server_no_context_takeover", ";", "permessage-deflate;",
        "=", "permessage-deflate; =15", "permessage-deflate; server_max_window_bits=",
    ])
    func aMalformedExtensionsAnswerFailsTheHandshakeNamingTheField(answer: String) async throws {
        defer { fixture.server.stop() }
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&=+;")
        let query = "?extensions=" + (answer.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")
        let outcome = await Result { () async throws(ErrandError) in
            try await fixture.makeAgent(transport: CurlTransport()).webSocket(Echo(query: query))
        }
        guard case .failure(.serialization(let reason)) = outcome else {
            Issue.record("\"\(answer)\" ended with \(outcome)")
            return
        }
        #expect(reason.contains("Sec-WebSocket-Extensions"), "\(reason)")
    }

    @Test func extensionParametersThatAreNotWellFormedAreRefusedByTheParser() throws {
        for field in ["permessage-deflate; =", "; ;", ";", "permessage-deflate;;", "permessage-deflate; a=b=c", ""] {
            #expect(throws: ErrandError.self, "\"\(field)\"") {
                try PerMessageDeflateParameters(accepted: field, offered: true)
            }
        }
        #expect(
            try PerMessageDeflateParameters(
                accepted: "permessage-deflate ; server_no_context_takeover ; client_max_window_bits=\"10\"",
                offered: true
            ).clientMaxWindowBits == 10)
    }

    // MARK: 2. Options a caller sets

    @Test func everyOptionIsClampedToWhatASocketCanUse() {
        var options = WebSocketOptions()
        options.maximumMessageSize = .max
        #expect(options.maximumMessageSize == WebSocketOptions.largestMessageSize)
        options.maximumMessageSize = -5
        #expect(options.maximumMessageSize == 1)
        options.pingInterval = -1
        #expect(options.pingInterval == nil)
        options.pingInterval = .nan
        #expect(options.pingInterval == nil)
        options.pingInterval = .infinity
        #expect(options.pingInterval == nil)
        options.pingInterval = 0.0001
        #expect(options.pingInterval == WebSocketOptions.shortestInterval)
        options.pingTimeout = .infinity
        #expect(options.pingTimeout == WebSocketOptions.longestInterval)
        options.pingTimeout = .nan
        #expect(options.pingTimeout == 10)
        options.closeTimeout = -3
        #expect(options.closeTimeout == 0)
        options.closeTimeout = 1e300
        #expect(options.closeTimeout == WebSocketOptions.longestInterval)
    }

    @Test(arguments: [Int.max, Int.min, 0, -1])
    func aSocketWithAnExtremeMessageLimitStillOpensAndEchoes(limit: Int) async throws {
        defer { fixture.server.stop() }
        var options = WebSocketOptions()
        options.maximumMessageSize = limit
        let socket = try await fixture.makeAgent(transport: CurlTransport()).webSocket(Echo(), options: options)
        try await socket.send("x")
        var messages = socket.makeAsyncIterator()
        #expect(try await messages.next() == .text("x"))
        await socket.close()
    }

    @Test(arguments: ["chat\r\nX-Injected: 1", "", "two words", "a,b"])
    func aSubprotocolThatIsNotATokenIsRefusedBeforeAnythingIsSent(subprotocol: String) async throws {
        defer { fixture.server.stop() }
        var options = WebSocketOptions()
        options.subprotocols = ["chat", subprotocol]
        let outcome = await Result { () async throws(ErrandError) in
            try await fixture.makeAgent(transport: CurlTransport()).webSocket(Echo(), options: options)
        }
        guard case .failure(.serialization(let reason)) = outcome else {
            Issue.record("ended with \(outcome)")
            return
        }
        #expect(reason.contains("subprotocol"))
        #expect(fixture.server.receivedRequests(path: "/ws/").isEmpty)
    }

    // MARK: 3. A peer that stopped reading

    /// Sends 256 KiB messages until one throws; `nil` if none did within `seconds`.
    static func sendUntilItFails(_ socket: WebSocket, within seconds: TimeInterval) async -> ErrandError? {
        await outcome(within: seconds) { () async -> ErrandError? in
            let message = Data(count: 256 << 10)
            while true {
                do throws(ErrandError) { try await socket.send(message) } catch { return error }
            }
        } ?? nil
    }

    /// A socket to a peer that stopped reading (no compression, no keep-alive), sent to until
    /// more than ``WebSocketSession/sendBufferLimit`` waits: the sender's task is waiting for room.
    static func filledSocketToAStalledPeer(
        on agent: NetworkAgent, closeTimeout: TimeInterval
    ) async throws -> (socket: WebSocket, sender: Task<ErrandError?, Never>) {
        var options = WebSocketOptions()
        options.compression = false
        options.pingInterval = nil
        options.closeTimeout = closeTimeout
        let socket = try await agent.webSocket(Fault(kind: "stall?hold_s=600"), options: options)
        let sender = Task { await sendUntilItFails(socket, within: 60) }
        try await eventually(within: 30) { socket.queuedBytes > WebSocketSession.sendBufferLimit }
        return (socket, sender)
    }

    @Test(arguments: Kind.allCases)
    func aSendToAPeerThatStoppedReadingEndsWhenTheKeepAliveFailsTheSocket(kind: Kind) async throws {
        defer { fixture.server.stop() }
        var options = WebSocketOptions()
        options.compression = false
        options.pingInterval = 0.3
        options.pingTimeout = 0.5
        options.closeTimeout = 0.5
        let socket = try await realTimeAgent(kind).webSocket(Fault(kind: "stall?hold_s=600"), options: options)
        let error = await Self.sendUntilItFails(socket, within: 30)
        #expect(error == .timedOut, "a send waiting for room ended with \(String(describing: error))")
        let ended = await outcome(within: 15) { await Self.end(of: socket) }
        #expect(ended != nil, "the socket's task never finished")
        #expect(!socket.task.isExecuting)
    }

    @Test(arguments: Kind.allCases)
    func closingASocketWhosePeerStoppedReadingDropsItAfterTheCloseTimeout(kind: Kind) async throws {
        defer { fixture.server.stop() }
        // Fill the connection, then one more send that waits for room.
        let (socket, sender) = try await Self.filledSocketToAStalledPeer(on: realTimeAgent(kind), closeTimeout: 0.5)
        let closed = await outcome(within: 15) { () async -> Bool in
            await socket.close()
            return true
        }
        #expect(closed == true, "close() did not return")
        let error = await sender.value
        #expect(error != nil, "the waiting send was never resumed")
        let ended = await outcome(within: 15) { await Self.end(of: socket) }
        #expect(ended != nil, "the socket's task never finished")
    }

    @Test(arguments: Kind.allCases)
    func cancellingASocketWhosePeerStoppedReadingEndsItsTaskAndItsSends(kind: Kind) async throws {
        defer { fixture.server.stop() }
        let agent = realTimeAgent(kind)
        for cancel in [{ (socket: WebSocket) in socket.task.cancel() }, { _ in agent.cancelAllRequests() }] {
            let (socket, sender) = try await Self.filledSocketToAStalledPeer(on: agent, closeTimeout: 8)
            cancel(socket)
            // At once, not when the close frame that cannot go out gives up.
            let error = await outcome(within: 4) { await sender.value }
            #expect(error == .some(.cancelled), "the waiting send ended with \(String(describing: error))")
            // The close frame cannot go out: the connection goes after the close timeout.
            let ended = await outcome(within: 60) { await Self.end(of: socket) }
            #expect(ended.map { (try? $0.get()) == nil } == true, "the socket's task never failed")
        }
    }

    @Test(arguments: Kind.allCases)
    func cancellingASocketThatAlreadyFailedDropsItsConnectionAtOnce(kind: Kind) async throws {
        defer { fixture.server.stop() }
        var options = WebSocketOptions()
        options.compression = false
        options.pingInterval = 0.2
        options.pingTimeout = 0.2
        options.closeTimeout = 600
        let socket = try await realTimeAgent(kind).webSocket(Fault(kind: "stall?hold_s=600"), options: options)
        // The keep-alive fails the socket; its close frame waits behind what the peer never read.
        #expect(await Self.sendUntilItFails(socket, within: 30) == .timedOut)
        socket.task.cancel()
        let ended = await outcome(within: 10) { await Self.end(of: socket) }
        #expect(ended != nil, "the socket's task waited for its close frame after the cancel")
    }

    @Test(arguments: Kind.allCases)
    func cancellingASocketThatIsClosingDropsItsConnectionAtOnce(kind: Kind) async throws {
        defer { fixture.server.stop() }
        let (socket, sender) = try await Self.filledSocketToAStalledPeer(on: realTimeAgent(kind), closeTimeout: 600)
        // The close frame waits behind what the peer never reads; close() waits for its answer.
        let closing = Task { await socket.close() }
        try await eventually { socket.phase == .closing }
        socket.task.cancel()
        let ended = await outcome(within: 10) { await Self.end(of: socket) }
        #expect(ended != nil, "the socket's task waited for the close timeout after the cancel")
        let closed = await outcome(within: 10) { () async -> Bool in
            await closing.value
            return true
        }
        #expect(closed != nil, "close() waited for the close timeout after the cancel")
        _ = await sender.value
    }

    /// A consumer that holds the reading back and then closes: the peer's answer comes behind
    /// messages the consumer will never take, which the socket reads and drops from then on, so
    /// `close()` returns with the answer rather than after `closeTimeout`.
    @Test(arguments: Kind.allCases)
    func closingASocketWhoseConsumerHoldsTheReadingBackEndsWithThePeersAnswer(kind: Kind) async throws {
        defer { fixture.server.stop() }
        var options = WebSocketOptions()
        options.compression = false
        options.maximumMessageSize = 1 << 20
        options.closeTimeout = 600
        let socket = try await realTimeAgent(kind).webSocket(Echo(query: "?flood=1024&size=65536"), options: options)
        #expect(await fixture.server.webSocketFloodBlocked() != nil, "the reading was never held back")
        let closed = await outcome(within: 30) { () async -> Bool in
            await socket.close()
            return true
        }
        #expect(closed != nil, "close() waited for the close timeout behind messages nobody takes")
        #expect(await outcome(within: 30) { await self.fixture.server.webSocketCloseCodes(count: 1) } == [1000])
        // What arrived before the close is still the consumer's.
        var messages = socket.makeAsyncIterator()
        guard case .binary(let first)? = try await messages.next() else {
            Issue.record("the messages received before the close were lost")
            return
        }
        #expect(first.count == 65536)
    }

    // MARK: 4. A refused handshake on a kept-alive connection

    @Test(arguments: Kind.allCases)
    func aRefusedHandshakeEndsAsItsBodyIsFramedWhileTheConnectionStaysOpen(kind: Kind) async throws {
        defer { fixture.server.stop() }
        let agent = realTimeAgent(kind)
        let cases: [(String, Int, String)] = [
            ("refused-chunked", 403, "forbidden here\n"), ("refused-length", 403, "forbidden here\n"),
            ("refused-empty?status=204", 204, ""), ("refused-empty?status=304", 304, ""),
        ]
        for (fault, status, body) in cases {
            let outcome = await outcome(within: 15) {
                await Result { () async throws(ErrandError) in try await agent.webSocket(Fault(kind: fault)) }
            }
            guard let outcome else {
                Issue.record("\(fault): the handshake never ended")
                continue
            }
            guard case .failure(.statusCode(status)) = outcome else {
                Issue.record("\(fault): ended with \(outcome)")
                continue
            }
            let kept = fixture.server.receivedRequests(path: "/ws/fault/").count
            #expect(kept > 0)
            _ = body
        }
    }

    /// Also when the transport's buffer is smaller than the body: its pieces then come faster
    /// than they are taken, yet the body is small enough to be kept whole.
    @Test(arguments: [1 << 20, 1])
    func aRefusalsChunkedBodyIsKeptDecodedOnTheTask(bufferLimit: Int) async throws {
        defer { fixture.server.stop() }
        final class Kept: EventMonitor {
            let body = Locked<String?>(nil)
            func request(_ task: RequestTask, didFinish result: Result<Response, ErrandError>) {
                body.withLock { $0 = task.responseString }
            }
        }
        let kept = Kept()
        fixture.config.addEventMonitor(kept)
        let agent = fixture.makeAgent(transport: CurlTransport(bufferLimit: bufferLimit))
        await #expect(throws: ErrandError.statusCode(403)) { try await agent.webSocket(Fault(kind: "refused-chunked")) }
        try await eventually { kept.body.withLock { $0 } != nil }
        #expect(kept.body.withLock { $0 } == "forbidden here\n")
    }

    @Test(arguments: Kind.allCases)
    func theHandshakeTimeoutBoundsARefusalWhoseBodyNeverEnds(kind: Kind) async throws {
        defer { fixture.server.stop() }
        let agent = realTimeAgent(kind)
        // A refusal whose body ends only with the connection, which the server keeps open.
        let outcome = await outcome(within: 30) {
            await Result { () async throws(ErrandError) in
                try await agent.webSocket(Fault(kind: "refused-unframed?hold_s=600", timeoutInterval: 1))
            }
        }
        guard case .failure(.timedOut)? = outcome else {
            Issue.record("ended with \(String(describing: outcome))")
            return
        }
    }

    // MARK: 5. A head that never ends

    @Test(arguments: Kind.allCases)
    func endlessHeaderLinesAfterA101AreABadServerResponseAndStallNothingElse(kind: Kind) async throws {
        defer { fixture.server.stop() }
        let agent = realTimeAgent(kind)
        let handshake = Task {
            await Result { () async throws(ErrandError) in try await agent.webSocket(Fault(kind: "endless-head")) }
        }
        // Requests of the same agent go on meanwhile.
        for _ in 0..<5 {
            let answered = await outcome(within: 10) { try? await agent.response(Get()) }
            #expect(answered??.statusCode == 200, "a request stalled beside the endless head")
        }
        let ended = await outcome(within: 20) { await handshake.value }
        guard case .failure(.transport(let error))? = ended else {
            Issue.record("ended with \(String(describing: ended))")
            return
        }
        #expect(error.code == .badServerResponse)
    }

    // MARK: 6. A consumer that pauses

    @Test(arguments: Kind.allCases)
    func aConsumerThatPausesPastTheKeepAliveKeepsItsSocket(kind: Kind) async throws {
        defer { fixture.server.stop() }
        var options = WebSocketOptions()
        options.compression = false
        options.maximumMessageSize = 64 << 10
        let count = 2000
        let socket = try await manualTimeAgent(kind).webSocket(
            Echo(query: "?flood=\(count)&size=16384"), options: options)
        // The consumer reads nothing until the server had to wait: the reading is paused.
        #expect(await fixture.server.webSocketFloodBlocked() != nil)
        // A ping goes out, and every wait the socket asked for passes, while the consumer holds
        // the socket back: its pong waits behind the messages.
        async let pong = Result { () async throws(ErrandError) in try await socket.ping() }
        try await eventually { socket.pendingPingCount == 1 }
        fixture.timer.fireAll()
        fixture.timer.fireAll()
        var messages = socket.makeAsyncIterator()
        for index in 0..<count {
            guard case .binary(let data) = try await messages.next(), data.count == 16384 else {
                Issue.record("message \(index) was lost")
                return
            }
        }
        #expect(try await messages.next() == .text("flood done"))
        let answered = await pong
        #expect(throws: Never.self) { try answered.get() }
        try await socket.send("still open")
        #expect(try await messages.next() == .text("still open"))
        await socket.close()
    }

    /// A consumer just keeping up pauses and resumes the reading as often as half the message
    /// limit arrives; a keep-alive scheduled anew at each resume lives its whole interval, cancelled
    /// or not (Dispatch keeps a cancelled `asyncAfter` until its deadline).
    @Test func pausingAndResumingTheReadingSchedulesNoKeepAliveEachTime() throws {
        let scheduled = Locked(0)
        let timer = RetryTimer { _, _ in
            scheduled.withLock { $0 += 1 }
            return {}
        }
        let peer = StubWebSocketPeer(
            request: TransportRequest(url: try #require(URL(string: "ws://stub"))), events: { _ in })
        var options = WebSocketOptions()
        options.pingInterval = 3600
        let session = WebSocketSession(
            connection: StubSocketConnection(peer: peer), options: options, compression: nil, timer: timer,
            flow: { _ in })
        for _ in 0..<1000 {
            session.readingPaused(true)
            session.readingPaused(false)
        }
        #expect(scheduled.withLock { $0 } <= 2, "1,000 pauses scheduled \(scheduled.withLock { $0 }) timers of an hour")
    }

    /// The same for a ping waiting for its pong: its timeout counts from the last resume, without
    /// a timer made at each.
    @Test func pausingAndResumingTheReadingSchedulesNoPingTimeoutEachTime() async throws {
        let scheduled = Locked(0)
        let timer = RetryTimer { _, _ in
            scheduled.withLock { $0 += 1 }
            return {}
        }
        let peer = StubWebSocketPeer(
            request: TransportRequest(url: try #require(URL(string: "ws://stub"))), events: { _ in })
        var options = WebSocketOptions()
        options.pingInterval = nil
        let session = WebSocketSession(
            connection: StubSocketConnection(peer: peer), options: options, compression: nil, timer: timer,
            flow: { _ in })
        // The stub's peer never answers: what the client wrote reaches no reader of its events.
        let ping = Task { try? await session.ping(Data([1])) }
        try await eventually { session.pendingPingCount == 1 }
        for _ in 0..<1000 {
            session.readingPaused(true)
            session.readingPaused(false)
        }
        #expect(scheduled.withLock { $0 } <= 2, "1,000 pauses scheduled \(scheduled.withLock { $0 }) ping timeouts")
        session.connectionEnded(nil)
        _ = await ping.value
    }

    // MARK: 7. The obvious loop

    @Test func aSocketIteratedWithoutAVariableStaysOpenForTheLoop() async throws {
        defer { fixture.server.stop() }
        let agent = fixture.makeAgent(transport: CurlTransport())
        var received: [String] = []
        // The messages come after the loop began, 20 ms apart.
        for try await message in try await agent.webSocket(Echo(query: "?ticks=3&tick_ms=20")) {
            guard case .text(let text) = message else { continue }
            received.append(text.trimmingCharacters(in: ["."]))
            if received.count == 3 { break }
        }
        #expect(received == ["tick 1", "tick 2", "tick 3"])
    }

    @Test func aSocketLetGoOfAsItsIterationEndsEchoesTheServersCode() async throws {
        defer { fixture.server.stop() }
        let agent = fixture.makeAgent(transport: CurlTransport())
        for round in 1...20 {
            // The loop ends with the server's close, and the socket goes with the function.
            func readToTheEnd() async throws {
                for try await _ in try await agent.webSocket(Echo(query: "?send=1&close=4000")) {}
            }
            await #expect(throws: ErrandError.webSocketClosed(code: WebSocketCloseCode(rawValue: 4000), reason: "")) {
                try await readToTheEnd()
            }
            let codes = await fixture.server.webSocketCloseCodes(count: round)
            #expect(codes.last == 4000, "round \(round): the client answered \(String(describing: codes.last))")
        }
    }

    // MARK: 8. A message over the limit

    @Test(arguments: [true, false])
    func aMessageOverTheLimitClosesWith1009(compresses: Bool) async throws {
        defer { fixture.server.stop() }
        var options = WebSocketOptions()
        options.compression = compresses
        options.maximumMessageSize = 1 << 20
        let socket = try await fixture.makeAgent(transport: CurlTransport()).webSocket(
            Echo(query: "?flood=20&size=\(2 << 20)"), options: options)
        #expect(socket.isCompressed == compresses)
        let (_, error) = await WebSocketTests.drain(socket)
        #expect(error == .responseTooLarge(1 << 20))
        let codes = await outcome(within: 15) { await fixture.server.webSocketCloseCodes(count: 1) }
        #expect(codes == [1009], "the server got \(String(describing: codes))")
    }

    // MARK: 10. Frames RFC 6455 forbids

    @Test func framesTheRFCForbidsAreRefusedBeforeAnythingIsSent() async throws {
        defer { fixture.server.stop() }
        let socket = try await fixture.makeAgent(transport: CurlTransport()).webSocket(Echo())
        await #expect(throws: ErrandError.self) { try await socket.ping(Data(count: 126)) }
        for code: UInt16 in [1005, 1006, 1015, 999, 0, 1004, 1016, 2999, 5000, 65535] {
            await #expect(throws: ErrandError.self, "\(code)") {
                try await socket.close(WebSocketCloseCode(rawValue: code), reason: "")
            }
        }
        // Still open: nothing was sent.
        try await socket.send("open")
        var messages = socket.makeAsyncIterator()
        #expect(try await messages.next() == .text("open"))
        try await socket.close(WebSocketCloseCode(rawValue: 4000), reason: "done")
        #expect(await fixture.server.webSocketCloseCodes(count: 1) == [4000])
    }

    @Test func anUnsolicitedPongCompletesNoPing() async throws {
        defer { fixture.server.stop() }
        let socket = try await fixture.makeAgent(transport: CurlTransport()).webSocket(
            Echo(query: "?pongs=0&stray_pongs=1"))
        async let answered = Result { () async throws(ErrandError) in try await socket.ping() }
        // The server's stray, empty pong came before this message, and did not answer the ping.
        var messages = socket.makeAsyncIterator()
        #expect(try await messages.next() == .text("stray pong"))
        // The keep-alive's first wait, then the ping's timeout.
        await fixture.timer.waitForRequests(2)
        fixture.timer.fireAll()
        let outcome = await answered
        #expect(throws: ErrandError.timedOut) { try outcome.get() }
    }

    // MARK: 11. The HTTP pool's idle limit

    @Test(arguments: Kind.allCases)
    func aSocketOutlivesTheIdleLimitOfThePoolAndKeepsItsOwnBytes(kind: Kind) async throws {
        defer { fixture.server.stop() }
        var connection = ConnectionOptions()
        connection.idleConnectionTimeout = 1
        let agent = realTimeAgent(kind, connection: connection)
        var options = WebSocketOptions()
        options.pingInterval = nil
        var sockets: [WebSocket] = []
        for _ in 0..<12 { sockets.append(try await agent.webSocket(Echo(), options: options)) }
        _ = try await agent.response(Get())
        // Past the pool's idle limit and libcurl's once-a-second look for idle connections.
        try await Task.sleep(for: .milliseconds(2500))
        for _ in 0..<6 { _ = try await agent.response(Get()) }
        for (index, socket) in sockets.enumerated() {
            try await socket.send("socket \(index)")
            var messages = socket.makeAsyncIterator()
            #expect(try await messages.next() == .text("socket \(index)"))
            await socket.close()
        }
        #expect(
            fixture.server.receivedRequests().allSatisfy { $0.method == "GET" },
            "no WebSocket frame reached the server as an HTTP request")
    }

    // MARK: 19. The pool beside open sockets and streams

    @Test func openSocketsAndStreamsLeaveTheConnectionPoolToRequests() async throws {
        defer { fixture.server.stop() }
        struct Feed: BaseRequest {
            var url: String { "/sse/events?count=1000&interval=1000" }
        }
        let agent = fixture.makeAgent(transport: CurlTransport())
        var streams: [ResponseStream] = []
        for _ in 0..<30 {
            guard let stream = await outcome(within: 15, { try? await agent.stream(Feed()) }) ?? nil else {
                Issue.record("stream \(streams.count + 1) never opened: streams hold the host's places")
                return
            }
            streams.append(stream)
        }
        var sockets: [WebSocket] = []
        for _ in 0..<30 { sockets.append(try await agent.webSocket(Echo())) }
        var newConnections = 0
        for _ in 0..<40 {
            let task = agent.start(Get())
            _ = await Result { () async throws(ErrandError) in try await task.value }
            if task.metrics?.isReusedConnection == false { newConnections += 1 }
        }
        #expect(newConnections <= 2, "\(newConnections) of 40 sequential requests opened a connection")
        streams.forEach { $0.cancel() }
        for socket in sockets { await socket.close() }
    }
}

/// What `work` returned, or `nil` when it had not within `seconds` (widened under a sanitizer):
/// a wait that never ends fails the test instead of hanging it. The work is left running.
func outcome<T: Sendable>(within seconds: TimeInterval, _ work: @escaping @Sendable () async -> T) async -> T? {
    let resumed = Locked(false)
    return await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
        let resume = { @Sendable (value: T?) in
            guard
                !resumed.withLock({ done in
                    defer { done = true }; return done
                })
            else { return }
            continuation.resume(returning: value)
        }
        Task { resume(await work()) }
        Task {
            try? await Task.sleep(for: timingBound(.seconds(seconds)))
            resume(nil)
        }
    }
}
