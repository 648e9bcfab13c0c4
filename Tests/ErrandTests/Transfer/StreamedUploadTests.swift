import ErrandScenarios
import ErrandTestServer
import Foundation
import Testing

@testable import Errand

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A POST or PUT whose body is a stream, with the knobs a test varies as stored properties.
private struct StreamedUpload: BaseRequest {
    var url = "/upload"
    var method: HTTPMethod = .post
    var uploadBody: UploadBody?
    var uploadProgress: (@Sendable (TransferProgress) -> Void)?
    var interceptors: [any RequestInterceptor] = []
    var coalescesDuplicates = false
    var timeoutInterval: TimeInterval = 60
    var timeoutIntervalForResource: TimeInterval?
}

/// A body stream the test feeds through its continuation, and what its producer is told when it ends.
private struct Producer {
    typealias Termination = AsyncStream<Data>.Continuation.Termination

    let chunks: AsyncStream<Data>
    let continuation: AsyncStream<Data>.Continuation
    private let terminations: AsyncStream<Termination>

    init() {
        (chunks, continuation) = AsyncStream.makeStream(of: Data.self)
        let (terminations, told) = AsyncStream.makeStream(of: Termination.self)
        self.terminations = terminations
        continuation.onTermination = { termination in
            told.yield(termination)
            told.finish()
        }
    }

    /// Whether the stream ended by its reader's cancelling it, waiting until it ended.
    func wasCancelled() async -> Bool {
        for await termination in terminations {
            if case .cancelled = termination { return true }
            return false
        }
        return false
    }

    /// Yields `chunks` and finishes.
    func send(_ chunks: [Data]) {
        chunks.forEach { continuation.yield($0) }
        continuation.finish()
    }
}

/// Counts the retry decisions it is asked for, and always asks for another attempt.
private final class AlwaysRetry: RequestInterceptor {
    let asked = Locked(0)

    func retry(_ task: RequestTask, dueTo error: ErrandError) async -> RetryDecision {
        asked.withLock { $0 += 1 }
        return .retry
    }
}

/// ``UploadBody/stream(_:length:)``: bodies produced while they are sent, chunked or of a declared
/// length, under both transports (``URLSessionTransport`` sends them through libcurl on Linux).
@Suite("Streamed uploads", .enabled(if: CurlTransport.isAvailable))
struct StreamedUploadTests {
    /// Chunk `index` of a body: sizes that straddle libcurl's 64 KiB reads, and an empty chunk.
    private static func chunk(_ index: Int) -> Data {
        let sizes = [1, 70_000, 0, 65_536, 3, 200_000, 17, 131_071]
        let size = sizes[index % sizes.count]
        return TestServer.downloadContent(size: 1 << 20, version: index, range: 0..<size)
    }

    private static let chunks = (0..<8).map(chunk)
    private static let total = chunks.reduce(0) { $0 + $1.count }
    private static let checksum = chunks.reduce(into: Checksum()) { $0.update($1) }

    private static func agent(_ fixture: TransferFixture, transport: any Transport = CurlTransport()) -> NetworkAgent {
        let config = NetworkConfig()
        config.baseUrl = fixture.server.baseURL
        config.callbackQueue = DispatchQueue(label: "errand.streamed-upload-tests.callbacks")
        return NetworkAgent(config: config, transport: transport)
    }

    /// The transport that sent `transport`'s streamed bodies: itself, or on Linux the libcurl one a
    /// ``URLSessionTransport`` sends them through.
    private static func curlTransport(of transport: any Transport) -> CurlTransport? {
        if let curl = transport as? CurlTransport { return curl }
        #if canImport(FoundationNetworking)
            return (transport as? URLSessionTransport)?.curlTransport
        #else
            return nil
        #endif
    }

    // MARK: What arrives

    @Test(arguments: TransportKind.allCases)
    func aBodyOfUnknownLengthGoesOutChunkedAndArrivesByteExact(_ kind: TransportKind) async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let producer = Producer()
        producer.send(Self.chunks)
        let response = try await Self.agent(fixture, transport: kind.make()).response(
            StreamedUpload(uploadBody: .stream(producer.chunks, length: nil)))
        #expect(response.object["bytes"] as? Int == Self.total)
        #expect(response.object["checksum"] as? String == Self.checksum.hexDigits)
        #expect(response.object["content_type"] as? String == "application/octet-stream")
        let sent = try #require(fixture.server.receivedRequests(path: "/upload").last)
        #expect(sent.header("Transfer-Encoding") == "chunked")
        #expect(sent.header("Content-Length") == nil)
    }

    /// A chunk may be a slice of a larger buffer, whose indices do not start at zero.
    @Test(arguments: TransportKind.allCases)
    func chunksThatAreSlicesArriveAsTheSlicesAre(_ kind: TransportKind) async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let producer = Producer()
        let buffer = Self.chunks.reduce(Data(), +)
        var slices: [Data] = []
        var offset = buffer.startIndex
        for chunk in Self.chunks {
            slices.append(buffer[offset..<offset + chunk.count])
            offset += chunk.count
        }
        #expect(slices.contains { $0.startIndex > 0 })
        producer.send(slices)
        let response = try await Self.agent(fixture, transport: kind.make()).response(
            StreamedUpload(uploadBody: .stream(producer.chunks, length: nil)))
        #expect(response.object["bytes"] as? Int == Self.total)
        #expect(response.object["checksum"] as? String == Self.checksum.hexDigits)
    }

    @Test(arguments: TransportKind.allCases)
    func aBodyOfKnownLengthDeclaresItAndArrivesByteExact(_ kind: TransportKind) async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let producer = Producer()
        producer.send(Self.chunks)
        let response = try await Self.agent(fixture, transport: kind.make()).response(
            StreamedUpload(method: .put, uploadBody: .stream(producer.chunks, length: Int64(Self.total))))
        #expect(response.object["bytes"] as? Int == Self.total)
        #expect(response.object["checksum"] as? String == Self.checksum.hexDigits)
        let sent = try #require(fixture.server.receivedRequests(path: "/upload").last)
        #expect(sent.header("Content-Length") == String(Self.total))
        #expect(sent.header("Transfer-Encoding") == nil)
    }

    @Test(arguments: TransportKind.allCases)
    func anEmptyStreamSendsAnEmptyBody(_ kind: TransportKind) async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let agent = Self.agent(fixture, transport: kind.make())
        for length: Int64? in [nil, 0] {
            let producer = Producer()
            producer.send([])
            let response = try await agent.response(
                StreamedUpload(uploadBody: .stream(producer.chunks, length: length)))
            #expect(response.object["bytes"] as? Int == 0)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aProducerSlowerThanTheNetworkStillArrivesWhole(_ kind: TransportKind) async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let producer = Producer()
        let task = Self.agent(fixture, transport: kind.make()).start(
            StreamedUpload(uploadBody: .stream(producer.chunks, length: nil)))
        var progress = task.uploadProgress.makeAsyncIterator()
        var sent: Int64 = 0
        var seen: Int64 = 0
        for chunk in Self.chunks {
            producer.continuation.yield(chunk)
            sent += Int64(chunk.count)
            // Everything so far went out: the transfer waits, paused, until the next chunk comes.
            while seen < sent, let value = await progress.next() { seen = value.completedBytes }
        }
        producer.continuation.finish()
        let response = try await task.value
        #expect(response.object["bytes"] as? Int == Self.total)
        #expect(response.object["checksum"] as? String == Self.checksum.hexDigits)
    }

    @Test(arguments: TransportKind.allCases, [false, true])
    func progressEndsAtTheBytesSent(_ kind: TransportKind, declaresLength: Bool) async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let producer = Producer()
        producer.send(Self.chunks)
        let log = ProgressLog()
        let agent = Self.agent(fixture, transport: kind.make())
        let length = declaresLength ? Int64(Self.total) : nil
        let task = agent.start(
            StreamedUpload(uploadBody: .stream(producer.chunks, length: length), uploadProgress: { log.append($0) }))
        var streamed: [TransferProgress] = []
        for await value in task.uploadProgress { streamed.append(value) }
        _ = try await task.value
        await TransferFixture.callbacksDelivered(on: agent)
        let whole = TransferProgress(completedBytes: Int64(Self.total), totalBytes: Int64(Self.total))
        #expect(log.values.last == whole)
        #expect(streamed.last == whole)
        #expect(log.isMonotonic)
        // Until the end, a body of unknown length has no total.
        #expect(log.values.dropLast().allSatisfy { $0.totalBytes == length })
    }

    @Test(arguments: TransportKind.allCases)
    func waitingForTheProducerIsNotAnIdleTimeout(_ kind: TransportKind) async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let producer = Producer()
        let task = Self.agent(fixture, transport: kind.make()).start(
            StreamedUpload(uploadBody: .stream(producer.chunks, length: nil), timeoutInterval: 1))
        producer.continuation.yield(Data(count: 1000))
        var progress = task.uploadProgress.makeAsyncIterator()
        while let value = await progress.next(), value.completedBytes < 1000 {}
        // Paused for the producer, well past the idle timeout: the network is not what is slow.
        try await Task.sleep(for: .milliseconds(2500))
        producer.send([Data(count: 1000)])
        let response = try await task.value
        #expect(response.object["bytes"] as? Int == 2000)
    }

    @Test(arguments: TransportKind.allCases)
    func aProducerThatNeverFinishesMeetsTheResourceDeadline(_ kind: TransportKind) async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let producer = Producer()
        producer.continuation.yield(Data(count: 1000))
        let task = await Self.agent(fixture, transport: kind.make()).finishedTask(
            StreamedUpload(uploadBody: .stream(producer.chunks, length: nil), timeoutIntervalForResource: 0.5))
        #expect(task.error == .timedOut)
        #expect(await producer.wasCancelled())
    }

    // MARK: A body that is not what it declared

    @Test(arguments: TransportKind.allCases)
    func aStreamLongerThanDeclaredFailsNamingBothLengths(_ kind: TransportKind) async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let agent = Self.agent(fixture, transport: kind.make())
        // All at once, and the declared length first then more: the last declared byte is held
        // back until the stream ends, so the body cannot go out as if complete.
        for chunks in [[Data(count: 1500)], [Data(count: 1000), Data(count: 500)]] {
            let producer = Producer()
            producer.send(chunks)
            let task = await agent.finishedTask(StreamedUpload(uploadBody: .stream(producer.chunks, length: 1000)))
            guard case .serialization(let reason) = task.error else {
                Issue.record("expected a serialization error, got \(String(describing: task.error))")
                continue
            }
            #expect(reason.contains("more than its declared length of 1000 bytes (1500 so far)"))
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aStreamShorterThanDeclaredFailsNamingBothLengths(_ kind: TransportKind) async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let producer = Producer()
        producer.send([Data(count: 600)])
        let task = await Self.agent(fixture, transport: kind.make()).finishedTask(
            StreamedUpload(uploadBody: .stream(producer.chunks, length: 1000)))
        guard case .serialization(let reason) = task.error else {
            Issue.record("expected a serialization error, got \(String(describing: task.error))")
            return
        }
        #expect(reason.contains("ended after 600 bytes, short of its declared length of 1000 bytes"))
    }

    @Test func aNegativeLengthFailsBeforeAnythingIsSent() async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let producer = Producer()
        let task = await Self.agent(fixture).finishedTask(
            StreamedUpload(uploadBody: .stream(producer.chunks, length: -1)))
        #expect(task.error == .serialization("a streamed upload body cannot declare a negative length (-1 bytes)"))
        #expect(await producer.wasCancelled())
        #expect(fixture.server.receivedRequests(path: "/upload").isEmpty)
    }

    // MARK: Sent once

    @Test(arguments: TransportKind.allCases)
    func a503IsNotRetriedAndNoInterceptorIsAsked(_ kind: TransportKind) async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let always = AlwaysRetry()
        let producer = Producer()
        producer.send(Self.chunks)
        // PUT is one of the methods RetryPolicy retries, and 503 one of its statuses.
        let request = StreamedUpload(
            url: "/status/503", method: .put, uploadBody: .stream(producer.chunks, length: nil),
            interceptors: [RetryPolicy(maxAttempts: 3, baseDelay: 0), always])
        let task = await Self.agent(fixture, transport: kind.make()).finishedTask(request)
        #expect(task.error == .statusCode(503))
        #expect(task.attemptCount == 1)
        #expect(always.asked[\.self] == 0)
        #expect(fixture.server.receivedRequests(path: "/status/503").count == 1)
    }

    @Test(arguments: TransportKind.allCases)
    func identicalStreamedPostsAreNotCoalesced(_ kind: TransportKind) async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let agent = Self.agent(fixture, transport: kind.make())
        let producers = [Producer(), Producer()]
        let requests = producers.map {
            StreamedUpload(uploadBody: .stream($0.chunks, length: nil), coalescesDuplicates: true)
        }
        #expect(try !RequestPlan(requests[0], config: agent.config).coalesces)
        // Both in flight, neither with a byte sent, before either body is produced.
        let tasks = requests.map { agent.start($0) }
        try await eventually { fixture.server.receivedRequests(path: "/upload").count == 2 }
        producers.forEach { $0.send(Self.chunks) }
        for task in tasks {
            let response = try await task.value
            #expect(response.object["bytes"] as? Int == Self.total)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aRedirectThatNeedsTheBodyAgainIsRefused(_ kind: TransportKind) async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let producer = Producer()
        producer.send(Self.chunks)
        let task = await Self.agent(fixture, transport: kind.make()).finishedTask(
            StreamedUpload(
                url: "/redirect-to?url=%2Fupload&status_code=307", uploadBody: .stream(producer.chunks, length: nil)))
        guard case .redirectRefused(let reason) = task.error else {
            Issue.record("expected a refused redirect, got \(String(describing: task.error))")
            return
        }
        #expect(reason.contains("a streamed body is sent only once"))
        #expect(fixture.server.receivedRequests(path: "/upload").isEmpty)
    }

    @Test(arguments: TransportKind.allCases)
    func aBodyStreamIsTakenByOneSendOnly(_ kind: TransportKind) async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let producer = Producer()
        producer.send(Self.chunks)
        let transport = kind.make()
        let url = try #require(URL(string: fixture.server.baseURL + "/upload"))
        let request = TransportRequest(
            url: url, method: "POST", bodyStream: BodyStream(producer.chunks, length: nil))
        let outcomes = AsyncStream<ErrandError?>.makeStream()
        for _ in 0..<2 {
            _ = transport.send(request) { event in
                if case .completed(let error) = event { outcomes.continuation.yield(error) }
            }
        }
        var errors: [ErrandError?] = []
        for await error in outcomes.stream {
            errors.append(error)
            if errors.count == 2 { break }
        }
        #expect(errors.contains { $0 == nil })
        #expect(errors.contains { $0 == BodyStream.alreadySent(to: url) })
        #expect(fixture.server.receivedRequests(path: "/upload").count == 1)
    }

    // MARK: Cancelling and memory

    @Test(arguments: TransportKind.allCases)
    func cancellingMidUploadEndsPromptlyAndStopsThePump(_ kind: TransportKind) async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let producer = Producer()
        let task = Self.agent(fixture, transport: kind.make()).start(
            StreamedUpload(uploadBody: .stream(producer.chunks, length: nil)))
        producer.continuation.yield(Data(count: 100_000))
        var progress = task.uploadProgress.makeAsyncIterator()
        while let value = await progress.next(), value.completedBytes < 100_000 {}
        let cancelled = ContinuousClock.now
        task.cancel()
        await #expect(throws: ErrandError.cancelled) { try await task.value }
        // The pump let go of the stream: its producer is told, and nothing it yields is taken.
        #expect(await producer.wasCancelled())
        // Beside the whole suite, resuming this test can wait seconds for a cooperative thread; a
        // cancel that waited for the stalled upload would take its 60-second timeout.
        #expect(ContinuousClock.now - cancelled < timingBound(.seconds(20)))
        guard case .terminated = producer.continuation.yield(Data(count: 1)) else {
            Issue.record("a yield after the cancel was accepted")
            return
        }
    }

    @Test(arguments: TransportKind.allCases)
    func cancellingAtOnceEndsTheStreamWhetherOrNotItWasSent(_ kind: TransportKind) async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let agent = Self.agent(fixture, transport: kind.make())
        for _ in 0..<20 {
            let producer = Producer()
            agent.start(StreamedUpload(uploadBody: .stream(producer.chunks, length: nil))).cancel()
            #expect(await producer.wasCancelled())
        }
    }

    @Test(arguments: TransportKind.allCases)
    func a64MiBStreamKeepsThePumpsBufferBounded(_ kind: TransportKind) async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let size = 64 << 20
        let chunkSize = 64 << 10
        let offset = Locked(0)
        // Produced on demand: the pump's pace sets the producer's, so nothing piles up in the stream either.
        let chunks = AsyncStream<Data> {
            let start = offset.withLock { offset in
                defer { offset += chunkSize }
                return offset
            }
            guard start < size else { return nil }
            return TestServer.downloadContent(size: size, version: 3, range: start..<start + chunkSize)
        }
        let transport = kind.make()
        let response = try await Self.agent(fixture, transport: transport).response(
            StreamedUpload(uploadBody: .stream(chunks, length: Int64(size))))
        #expect(response.object["bytes"] as? Int == size)
        let expected = String(TransferFixture.expectedChecksum(size: size, version: 3), radix: 16)
        #expect(response.object["checksum"] as? String == String(repeating: "0", count: 16 - expected.count) + expected)
        // The pump waits once it holds its limit: at most one chunk more ever waited to be sent.
        let curl = try #require(Self.curlTransport(of: transport))
        #expect(curl.peakUploadBufferedBytes > 0)
        #expect(curl.peakUploadBufferedBytes <= BodyStreamPump.defaultLimit + chunkSize)
    }

    // MARK: URLSessionTransport

    #if canImport(FoundationNetworking)
        @Test func urlSessionTransportSendsAStreamedBodyThroughLibcurl() async throws {
            let fixture = try TransferFixture()
            defer { fixture.removeDirectory() }
            let producer = Producer()
            producer.send(Self.chunks)
            let transport = URLSessionTransport()
            let response = try await Self.agent(fixture, transport: transport).response(
                StreamedUpload(uploadBody: .stream(producer.chunks, length: nil)))
            #expect(response.object["checksum"] as? String == Self.checksum.hexDigits)
            #expect(transport.curlTransport != nil)
        }
    #endif

    @Test func urlSessionTransportRefusesAStreamedBodyItWouldSendItselfSayingWhy() async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        // A protocol class of the app's own keeps the requests it takes on the session, which
        // libcurl would bypass.
        let configuration = URLSessionConfiguration.default
        configuration.protocolClasses = [CannedStreamProtocol.self] + (configuration.protocolClasses ?? [])
        let producer = Producer()
        let upload = StreamedUpload(
            url: "http://\(CannedStreamProtocol.host)/upload", uploadBody: .stream(producer.chunks, length: nil))
        let task = await Self.agent(fixture, transport: URLSessionTransport(configuration: configuration))
            .finishedTask(upload)
        guard case .transport(let error) = task.error else {
            Issue.record("expected a transport error, got \(String(describing: task.error))")
            return
        }
        #expect(error.code == .unsupportedURL)
        #expect(error.localizedDescription.contains("UploadBody.stream"))
        #expect(await producer.wasCancelled())
        #expect(fixture.server.receivedRequests(path: "/upload").isEmpty)
    }

    // MARK: From "Downloads and uploads"

    /// As the article has it, but to the test server's `/upload`, which answers the bytes it got.
    private struct UploadExportApi: BaseRequest {
        let rows: AsyncStream<Data>
        var url: String { "/upload" }
        var method: HTTPMethod { .post }
        var headers: [String: String] { ["Content-Type": "text/csv"] }
        var uploadBody: UploadBody? { .stream(rows, length: nil) }
    }

    /// Rows of an export, a page at a time, as the upload asks for them.
    private actor ExportPages {
        private var next = 0
        let count: Int

        init(count: Int) { self.count = count }

        func nextPage() -> Data? {  // nil after the last page: the body ends
            guard next < count else { return nil }
            defer { next += 1 }
            return Data((0..<1000).map { "\(next),\($0)\n" }.joined().utf8)
        }
    }

    @Test func theArticlesExportIsSentAsItIsYielded() async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let agent = Self.agent(fixture)
        let (rows, continuation) = AsyncStream.makeStream(of: Data.self)
        let task = agent.start(UploadExportApi(rows: rows))
        for line in ["id,total\n", "1,9.50\n", "2,12.00\n"] {
            continuation.yield(Data(line.utf8))  // sent as it comes
        }
        continuation.finish()  // the body ends here
        let response = try await task.value
        #expect(response.object["bytes"] as? Int == "id,total\n1,9.50\n2,12.00\n".utf8.count)
        #expect(response.object["content_type"] as? String == "text/csv")
    }

    @Test func theArticlesPagesAreProducedOnDemand() async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let pages = ExportPages(count: 50)
        let body = UploadBody.stream(AsyncStream { await pages.nextPage() }, length: nil)
        var expected = Checksum()
        var size = 0
        for page in 0..<50 {
            let data = Data((0..<1000).map { "\(page),\($0)\n" }.joined().utf8)
            expected.update(data)
            size += data.count
        }
        let response = try await Self.agent(fixture).response(StreamedUpload(uploadBody: body))
        #expect(response.object["bytes"] as? Int == size)
        #expect(response.object["checksum"] as? String == expected.hexDigits)
    }

    // MARK: Values

    @Test func aStreamBodyEqualsOnlyItself() {
        let (chunks, _) = AsyncStream.makeStream(of: Data.self)
        let body = UploadBody.stream(chunks, length: 3)
        let copy = body
        #expect(body == copy)
        #expect(body != UploadBody.stream(chunks, length: 3))
        #expect(body != .data(Data([1, 2, 3])))
        guard case .stream(let stream) = body else {
            Issue.record("expected a stream body")
            return
        }
        #expect(stream.length == 3)
        var request = TransportRequest(url: URL(fileURLWithPath: "/"), bodyStream: stream)
        #expect(request == request)
        request.bodyStream = BodyStream(chunks, length: 3)
        #expect(request != TransportRequest(url: URL(fileURLWithPath: "/"), bodyStream: stream))
    }
}
