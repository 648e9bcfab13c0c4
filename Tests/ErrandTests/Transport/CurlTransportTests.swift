import ErrandTestServer
import Foundation
import Testing

@testable import Errand

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What CurlTransport shares with URLSessionTransport — streamed events, uploads, errors,
/// timeouts — checked under both, and what only CurlTransport reports.
@Suite("CurlTransport: events, bodies, errors and timeouts", .enabled(if: CurlTransport.isAvailable))
struct CurlTransportTests {
    private func request(_ path: String, method: String = "GET", body: Data? = nil) throws -> TransportRequest {
        try TransportRequest.loopback(path, method: method, body: body)
    }

    @Test(arguments: TransportKind.allCases)
    func aGetDeliversOneHeadItsBodyAndOneCompletion(_ kind: TransportKind) async throws {
        let probe = TransportProbe()
        _ = probe.send(try request("/get?x=1"), through: kind.make())
        let outcome = await probe.completion()
        #expect(outcome.error == nil)
        #expect(outcome.statusCode == 200)
        #expect(outcome.headCount == 1 && outcome.completionCount == 1 && !outcome.outOfOrder)
        #expect(outcome.json["args"] as? [String: String] == ["x": "1"])
        #expect(outcome.headers.headerField("Content-Type") == "application/json")
    }

    @Test func curlReportsTimingsAndTheHTTPVersion() async throws {
        let probe = TransportProbe()
        _ = probe.send(try request("/get"), through: CurlTransport())
        let metrics = try #require(await probe.completion().metrics)
        #expect(metrics.httpVersion == "HTTP/1.1")
        #expect(metrics.total > 0 && metrics.firstByte > 0 && metrics.firstByte <= metrics.total)
        #expect(metrics.redirectCount == 0)
    }

    @Test(arguments: TransportKind.allCases)
    func repeatedHeaderFieldsAreJoinedWithACommaAsURLSessionDoes(_ kind: TransportKind) async throws {
        let probe = TransportProbe()
        _ = probe.send(try request("/response-headers?X-Twice=one&X-Twice=two"), through: kind.make())
        let outcome = await probe.completion()
        #expect(outcome.headers.headerField("X-Twice") == "one, two")
    }

    @Test(arguments: TransportKind.allCases)
    func aGzipBodyArrivesDecoded(_ kind: TransportKind) async throws {
        let probe = TransportProbe()
        _ = probe.send(try request("/gzip"), through: kind.make())
        let outcome = await probe.completion()
        #expect(outcome.json["gzipped"] as? Bool == true)
    }

    @Test(arguments: ["foo", "gzip, foo", "x-unknown-coding"])
    func aBodyInACodingLibcurlCannotDecodeArrivesAsItCame(_ coding: String) async throws {
        let encoded = coding.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? coding
        let probe = TransportProbe()
        _ = probe.send(try request("/response-headers?Content-Encoding=\(encoded)"), through: CurlTransport())
        let outcome = await probe.completion()
        #expect(outcome.error == nil, "\(String(describing: outcome.error))")
        #expect(outcome.statusCode == 200)
        #expect(outcome.json["Content-Encoding"] as? String == coding, "the body, as the server sent it")
    }

    @Test func aKnownCodingIsStillDecodedAfterAnUnknownOneOnTheSameConnection() async throws {
        let transport = CurlTransport()
        let unknown = TransportProbe()
        _ = unknown.send(try request("/response-headers?Content-Encoding=foo"), through: transport)
        #expect(await unknown.completion().error == nil)
        let gzip = TransportProbe()
        _ = gzip.send(try request("/gzip"), through: transport)
        #expect(await gzip.completion().json["gzipped"] as? Bool == true)
    }

    @Test func aRangedRequestKeepsTheServersBytesEncoded() async throws {
        var ranged = try request("/gzip")
        ranged.headers["Range"] = "bytes=0-"
        let probe = TransportProbe()
        _ = probe.send(ranged, through: CurlTransport())
        let outcome = await probe.completion()
        // The gzip magic number: offsets into this body are the server's.
        #expect(outcome.body.prefix(2) == Data([0x1F, 0x8B]))
    }

    @Test(arguments: TransportKind.allCases)
    func aPostSendsItsBodyAndReportsUploadProgress(_ kind: TransportKind) async throws {
        let body = Data(repeating: UInt8(ascii: "a"), count: 200_000)
        var post = try request("/post", method: "POST", body: body)
        post.headers["Content-Type"] = "text/plain"
        let probe = TransportProbe()
        _ = probe.send(post, through: kind.make())
        let outcome = await probe.completion()
        #expect((outcome.json["data"] as? String)?.utf8.count == body.count)
        #expect(outcome.uploadProgress.last == Int64(body.count))
    }

    /// A body file that opens but cannot be read — a directory here, a failing disk elsewhere —
    /// fails the request with a file-system error naming it, never a `.cancelled` nobody asked for.
    @Test(arguments: TransportKind.allCases)
    func anUnreadableBodyFileIsAFileSystemErrorNamingIt(_ kind: TransportKind) async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("errand-body-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var upload = try request("/upload", method: "PUT")
        upload.bodyFileURL = directory
        let probe = TransportProbe()
        _ = probe.send(upload, through: kind.make())
        let outcome = await probe.completion()
        guard case .fileSystem(let reason) = outcome.error else {
            Issue.record("expected a file system error, got \(String(describing: outcome.error))")
            return
        }
        #expect(reason.contains(directory.path), "\(reason)")
        #expect(outcome.completionCount == 1)
    }

    @Test(arguments: TransportKind.allCases)
    func aFileBodyIsStreamedFromDisk(_ kind: TransportKind) async throws {
        let content = TestServer.repeatingPattern(size: 3_000_000)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("errand-curl-upload-\(UUID())")
        try content.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        var upload = try request("/upload", method: "PUT")
        upload.bodyFileURL = file
        let probe = TransportProbe()
        _ = probe.send(upload, through: kind.make())
        let outcome = await probe.completion()
        #expect(outcome.json["bytes"] as? Int == content.count)
        #expect(outcome.json["checksum"] as? String == String(format: "%016llx", Checksum(content).value))
    }

    @Test func aRefusedConnectionIsCannotConnectToHost() async throws {
        let closed = try TestServer()
        let port = closed.port
        closed.stop()
        let probe = TransportProbe()
        let url = try #require(URL(string: "http://127.0.0.1:\(port)/get"))
        _ = probe.send(TransportRequest(url: url), through: CurlTransport())
        #expect(await probe.completion().urlErrorCode == .cannotConnectToHost)
    }

    @Test func aConnectionClosedMidBodyIsNetworkConnectionLost() async throws {
        let probe = TransportProbe()
        _ = probe.send(try request("/download/100000?drop_after=1000"), through: CurlTransport())
        let outcome = await probe.completion()
        #expect(outcome.urlErrorCode == .networkConnectionLost)
        #expect(outcome.completionCount == 1)
    }

    /// Each round's connection ends after its answer — closed by the server once idle, or by
    /// libcurl because the request asked — and the next round's socket usually gets the same
    /// descriptor number, which the transport must watch afresh.
    @Test(arguments: [TransportKind.curl, .curlPollLoop])
    func aConnectionClosedAfterItsAnswerIsReplacedForTheNextRequest(_ kind: TransportKind) async throws {
        let transport = kind.make()
        var closing = try request("/get")
        closing.headers["Connection"] = "close"
        for (round, request) in [try request("/fault/closed-when-idle"), closing].flatMap({ [$0, $0, $0] }).enumerated()
        {
            let probe = TransportProbe()
            _ = probe.send(request, through: transport)
            let outcome = await probe.completion()
            #expect(outcome.error == nil && outcome.statusCode == 200, "round \(round)")
            #expect(outcome.metrics?.isReusedConnection == false, "round \(round)")
        }
    }

    @Test(arguments: TransportKind.allCases)
    func noDataWithinTheTimeoutIntervalTimesOut(_ kind: TransportKind) async throws {
        var slow = try request("/delay/5")
        slow.timeoutInterval = 0.5
        let probe = TransportProbe()
        _ = probe.send(slow, through: kind.make())
        let outcome = await probe.completion()
        #expect(outcome.error == .timedOut)
        // Ended by the timeout, not by the server's answer after 5 s.
        #expect(outcome.headCount == 0)
    }

    @Test func theResourceDeadlineEndsABodyThatKeepsTrickling() async throws {
        // A byte every 0.1 s never trips the idle timeout; only the deadline ends it.
        var trickle = try request("/drip?numbytes=600&duration=60")
        trickle.timeoutInterval = 5
        trickle.timeoutIntervalForResource = Double(timingBound(.seconds(1)).components.seconds)
        let probe = TransportProbe()
        _ = probe.send(trickle, through: CurlTransport())
        let outcome = await probe.completion()
        #expect(outcome.error == .timedOut)
        // Some bytes came, the minute-long drip did not finish.
        #expect(!outcome.body.isEmpty && outcome.body.count < 600)
    }

    @Test func extremeTimeoutsAreClampedNotFatal() async throws {
        for (idle, resource) in [(Double.infinity, Double.infinity), (.nan, .greatestFiniteMagnitude), (1e300, nil)] {
            var request = try request("/get")
            request.timeoutInterval = idle
            request.timeoutIntervalForResource = resource
            let probe = TransportProbe()
            _ = probe.send(request, through: CurlTransport())
            #expect(await probe.completion().statusCode == 200)
        }
        var negative = try request("/delay/5")
        negative.timeoutIntervalForResource = -1
        let probe = TransportProbe()
        _ = probe.send(negative, through: CurlTransport())
        #expect(await probe.completion().error == .timedOut)
    }

    @Test(arguments: ["\r\n", "\n", "\r", "\u{0B}", "\u{0C}", "\u{85}", "\u{2028}", "\u{2029}"])
    func aHeaderWithALineBreakIsNotSent(_ lineBreak: String) async throws {
        var request = try request("/headers")
        request.headers = [
            "X-Name": "ann\(lineBreak)X-Injected: yes", "X-Plain": "kept", "X-Bad\(lineBreak)Name": "dropped",
        ]
        let probe = TransportProbe()
        _ = probe.send(request, through: CurlTransport())
        let echoed = await probe.completion().echoedHeaders
        #expect(echoed.headerField("X-Plain") == "kept")
        #expect(echoed.headerField("X-Injected") == nil && echoed.headerField("X-Name") == nil)
        #expect(!echoed.values.contains("dropped"))
    }

    @Test func theDefaultTransportIsCurlOnLinuxUnlessOverridden() {
        let override = ProcessInfo.processInfo.environment[DefaultTransport.environmentVariable]
        let transport = DefaultTransport.make(configuration: .default)
        #if canImport(FoundationNetworking)
            #expect((transport is CurlTransport) == (override?.lowercased() != "urlsession"))
        #else
            #expect((transport is CurlTransport) == (override?.lowercased() == "curl"))
        #endif
    }
}
