import ErrandScenarios
import ErrandTestServer
import Foundation
import Testing

@testable import Errand

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Replay transport")
final class ReplayTransportTests {
    /// Where each test's HAR files go; removed with the suite instance.
    private let directory = FileManager.default.temporaryDirectory.appendingPathComponent("errand-replay-\(UUID())")

    init() throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }

    // MARK: Building recordings

    /// A HAR entry as a browser would write it, with only what a test varies.
    private func harEntry(
        _ url: String, method: String = "GET", status: Int = 200, body: String = "",
        encoding: String? = nil, headers: [String: String] = ["Content-Type": "application/json"],
        postData: [String: Any]? = nil, comment: String? = nil
    ) -> [String: Any] {
        var request: [String: Any] = [
            "method": method, "url": url, "httpVersion": "HTTP/1.1", "cookies": [], "headers": [],
            "queryString": [], "headersSize": -1, "bodySize": 0,
        ]
        request["postData"] = postData
        var content: [String: Any] = ["size": body.count, "mimeType": headers["Content-Type"] ?? "", "text": body]
        content["encoding"] = encoding
        var response: [String: Any] = [
            "status": status, "statusText": "", "httpVersion": "HTTP/1.1", "cookies": [],
            "headers": headers.sorted { $0.key < $1.key }.map { ["name": $0.key, "value": $0.value] },
            "content": content, "redirectURL": "", "headersSize": -1, "bodySize": body.count,
        ]
        response["comment"] = comment
        return [
            "startedDateTime": "2026-11-25T18:00:00.000Z", "time": 1, "request": request, "response": response,
            "cache": [:], "timings": ["send": 0, "wait": 1, "receive": 0],
        ]
    }

    /// A HAR file holding `entries`.
    private func file(_ entries: [[String: Any]], name: String = "session.har") throws -> URL {
        let archive: [String: Any] = [
            "log": ["version": "1.2", "creator": ["name": "test", "version": "1"], "entries": entries]
        ]
        return try file(JSONSerialization.data(withJSONObject: archive), name: name)
    }

    private func file(_ data: Data, name: String = "session.har") throws -> URL {
        let url = directory.appendingPathComponent(name)
        try data.write(to: url)
        return url
    }

    /// The outcome of `request` sent straight to `transport`, from its events.
    private func send(_ request: TransportRequest, to transport: any Transport) async -> Result<Response, ErrandError> {
        await withCheckedContinuation { continuation in
            let received = Locked((status: 0, headers: [String: String](), body: Data()))
            _ = transport.send(request) { event in
                switch event {
                case .responseHead(let status, let headers):
                    received.withLock {
                        $0.status = status; $0.headers = headers
                    }
                case .body(let chunk): received.withLock { $0.body += chunk }
                case .completed(let error?): continuation.resume(returning: .failure(error))
                case .completed(nil):
                    let (status, headers, body) = received.withLock { $0 }
                    continuation.resume(returning: .success(Response(statusCode: status, headers: headers, data: body)))
                default: break
                }
            }
        }
    }

    private func get(_ url: String, from transport: any Transport) async throws -> Response {
        try await send(TransportRequest(url: #require(URL(string: url))), to: transport).get()
    }

    private func post(_ url: String, json: String, to transport: any Transport) async throws -> Result<
        Response, ErrandError
    > {
        let request = TransportRequest(
            url: try #require(URL(string: url)), method: "POST", headers: ["Content-Type": "application/json"],
            body: Data(json.utf8))
        return await send(request, to: transport)
    }

    /// The reason a request failed with a replay miss, or `nil` when it did not.
    private func missReason(_ outcome: Result<Response, ErrandError>) -> String? {
        guard case .failure(.transport(let error)) = outcome, error.code == .resourceUnavailable else { return nil }
        return error.localizedDescription
    }

    // MARK: Record, then replay

    @Test func aSessionRecordedWithHARRecorderReplaysWithoutTheServer() async throws {
        let server = try TestServer()
        let config = NetworkConfig()
        config.baseUrl = server.baseURL
        let recorder = HARRecorder()
        config.addEventMonitor(recorder)
        let live = NetworkAgent(config: config)
        var bytes = HTTPBinRequest("/bytes/48?seed=5&size=big")
        bytes.responseSerializerType = .data
        var missing = HTTPBinRequest("/status/404")
        missing.acceptedStatusCodes = [404]
        let posted = HTTPBinRequest("/post", method: .post, arguments: ["nick": "ann", "level": 3])
        let recorded = [
            try await live.response(HTTPBinRequest("/get?page=2&sort=name")),
            try await live.response(posted),
            try await live.response(missing),
            try await live.response(bytes),
        ]
        try await eventually { recorder.entryCount == 4 }
        let har = directory.appendingPathComponent("recorded.har")
        try recorder.write(to: har)
        server.stop()

        config.clearEventMonitors()
        let offline = NetworkAgent(config: config, transport: try ReplayTransport(har: har))
        bytes.url = "/bytes/48?size=big&seed=5"
        let replayed = [
            try await offline.response(HTTPBinRequest("/get?sort=name&page=2")),
            try await offline.response(posted),
            try await offline.response(missing),
            try await offline.response(bytes),
        ]
        for (live, replay) in zip(recorded, replayed) {
            #expect(replay.statusCode == live.statusCode)
            #expect(replay.data == live.data)
            #expect(replay.value(forHeader: "Content-Type") == live.value(forHeader: "Content-Type"))
        }
        #expect((replayed[1].object["form"] as? [String: Any])?["nick"] as? String == "ann")
    }

    @Test func aResponsesTrailersAreRecordedAndReplayed() async throws {
        struct Trailers: BaseRequest {
            let baseUrl: String
            var url: String { "/framing/trailers" }
            var responseSerializerType: ResponseSerializerType { .data }
        }
        let server = try TestServer()
        let har = directory.appendingPathComponent("trailers.har")
        let recording = try ReplayTransport(har: har, onMissing: .record(via: CurlTransport(), into: har))
        let recorded = try await NetworkAgent(config: NetworkConfig(), transport: recording)
            .response(Trailers(baseUrl: server.baseURL))
        #expect(recorded.value(forTrailer: "X-Trailer") == "end")
        let entry = try #require(HTTPArchive(contentsOf: har).log.entries.first)
        #expect(entry.response.trailers?.map(\.name) == ["X-Checksum", "X-Trailer"])
        server.stop()

        let replayed = try await NetworkAgent(config: NetworkConfig(), transport: ReplayTransport(har: har))
            .response(Trailers(baseUrl: server.baseURL))
        #expect(replayed.trailers == recorded.trailers)
        #expect(replayed.data == recorded.data)
    }

    @Test func recordOnMissSendsThenAFreshTransportReplaysTheFile() async throws {
        let server = try TestServer()
        let har = directory.appendingPathComponent("cassette.har")
        let recording = try ReplayTransport(har: har, onMissing: .record(via: CurlTransport(), into: har))
        let first = try await get(server.baseURL + "/get?n=1", from: recording)
        #expect(first.statusCode == 200)
        // The entry is in the file once the request completed.
        #expect(try HTTPArchive(contentsOf: har).log.entries.count == 1)
        #expect(recording.entryCount == 1)
        // In memory too: the same request replays rather than going out again.
        #expect(try await get(server.baseURL + "/get?n=1", from: recording).data == first.data)
        let posted = try await post(server.baseURL + "/post", json: #"{"a":1}"#, to: recording).get()
        server.stop()

        let replay = try ReplayTransport(har: har, matching: .methodURLAndBody)
        #expect(replay.entryCount == 2)
        #expect(try await get(server.baseURL + "/get?n=1", from: replay).data == first.data)
        #expect(try await post(server.baseURL + "/post", json: #"{ "a": 1 }"#, to: replay).get().data == posted.data)
        #expect(missReason(try await post(server.baseURL + "/post", json: #"{"a":2}"#, to: replay)) != nil)
    }

    @Test func recordingWhereNoFileCanBeFailsTheRequestWithAFileSystemError() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let blocker = try file(Data("a file, not a folder".utf8), name: "blocker")
        let har = blocker.appendingPathComponent("session.har")
        let recording = try ReplayTransport(
            har: try file([]), onMissing: .record(via: CurlTransport(), into: har))
        let outcome = await send(
            TransportRequest(url: try #require(URL(string: server.baseURL + "/get"))), to: recording)
        guard case .failure(.fileSystem(let reason)) = outcome else {
            Issue.record("expected a file-system error, got \(outcome)")
            return
        }
        #expect(reason.contains(har.path))
    }

    @Test func recordingIntoALargeFileAppendsEachExchangeRatherThanRewritingIt() async throws {
        let server = try TestServer()
        defer { server.stop() }
        // A file that already holds 400 exchanges of 20 KB each.
        let page = String(repeating: "0123456789", count: 2000)
        let har = try file((0..<400).map { harEntry("http://api.test/page/\($0)", body: page) }, name: "large.har")
        let recording = try ReplayTransport(har: har, onMissing: .record(via: CurlTransport(), into: har))
        let agent = NetworkAgent(config: NetworkConfig(), transport: recording)
        let count = 100
        var fileIdentity: UInt64?
        for n in 0..<count {
            _ = try await agent.response(HTTPBinRequest(server.baseURL + "/get?n=\(n)"))
            // Every exchange is in the file, whole and valid, once its request returned.
            if n == 0 || n == count / 2 {
                #expect(try HTTPArchive(contentsOf: har).log.entries.count == 400 + n + 1)
            }
            // Written in place: a whole rewrite goes to a new file renamed over the old one.
            let identity = try #require(
                try FileManager.default.attributesOfItem(atPath: har.path)[.systemFileNumber] as? NSNumber
            ).uint64Value
            if n > 0 { #expect(identity == fileIdentity, "exchange \(n) rewrote the whole file") }
            fileIdentity = identity
        }
        let written = try HTTPArchive(contentsOf: har)
        #expect(written.log.entries.count == 400 + count)
        #expect(written.log.entries.last?.request.url == server.baseURL + "/get?n=\(count - 1)")
        #expect(written.log.entries.first?.response.content.text == page)
        server.stop()
        let replay = try ReplayTransport(har: har)
        #expect(replay.entryCount == 400 + count)
        #expect(try await get(server.baseURL + "/get?n=7", from: replay).statusCode == 200)
    }

    @Test func aRecordingFileReplacedMeanwhileIsWrittenWholeAgain() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let har = directory.appendingPathComponent("replaced.har")
        let recording = try ReplayTransport(har: har, onMissing: .record(via: CurlTransport(), into: har))
        _ = try await get(server.baseURL + "/get?n=1", from: recording)
        _ = try await get(server.baseURL + "/get?n=2", from: recording)
        // Someone else writes the file: the next exchange does not land in the middle of theirs.
        try Data(#"{"log": {"version": "1.2", "creator": {"name": "x", "version": "1"}, "entries": []}}"#.utf8)
            .write(to: har)
        _ = try await get(server.baseURL + "/get?n=3", from: recording)
        let urls = try HTTPArchive(contentsOf: har).log.entries.map(\.request.url)
        #expect(urls == (1...3).map { server.baseURL + "/get?n=\($0)" })
    }

    @Test func aBodyCutAtTheRecordingLimitSaysSoAndFailsToReplay() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let har = directory.appendingPathComponent("cut.har")
        let url = server.baseURL + "/sse/endless?size=1048576"
        let recording = try ReplayTransport(
            har: har, matching: .methodAndURL, onMissing: .record(via: CurlTransport(), into: har),
            recordedBodyLimit: 100_000)
        // The live request gets the whole stream; the recording keeps its start.
        #expect(try await get(url, from: recording).data.count == 1_048_576)
        let content = try #require(try HTTPArchive(contentsOf: har).log.entries.first?.response.content)
        #expect(content.size == 1_048_576)
        #expect(content.comment == "Truncated from 1048576 bytes.")
        #expect((content.text?.utf8.count ?? 0) <= 100_000)
        server.stop()

        let outcome = await send(
            TransportRequest(url: try #require(URL(string: url))), to: try ReplayTransport(har: har))
        guard case .failure(.decoding(let reason)) = outcome else {
            Issue.record("a cut body was replayed as if whole: \(outcome)")
            return
        }
        #expect(reason.contains("log.entries[0]") && reason.contains("Truncated from 1048576 bytes"), "\(reason)")
    }

    @Test func passThroughSendsAMissToTheOtherTransport() async throws {
        let replay = try ReplayTransport(
            har: try file([harEntry("http://api.test/known", body: #"{"from":"har"}"#)]),
            onMissing: .passThrough(StubTransport { _ in Response(statusCode: 201, data: Data("stub".utf8)) }))
        #expect(try await get("http://api.test/known", from: replay).string == #"{"from":"har"}"#)
        let missed = try await get("http://api.test/unknown", from: replay)
        #expect(missed.statusCode == 201 && missed.string == "stub")
    }

    // MARK: Matching

    @Test func queryOrderSchemeCaseDefaultPortAndFragmentDoNotMatter() async throws {
        let replay = try ReplayTransport(har: try file([harEntry("http://API.test/items?b=2&a=1&a=3", body: "[1]")]))
        for url in [
            "http://api.test/items?a=1&b=2&a=3", "HTTP://api.test:80/items?a=3&a=1&b=2#top",
        ] {
            #expect(try await get(url, from: replay).string == "[1]", "\(url)")
        }
        for url in [
            "http://api.test/items?a=1&b=2", "http://api.test/items?a=1&b=2&a=4",
            "http://api.test:8080/items?b=2&a=1&a=3",
        ] {
            let outcome = await send(TransportRequest(url: try #require(URL(string: url))), to: replay)
            #expect(missReason(outcome) != nil, "\(url)")
        }
    }

    @Test func aMissNamesTheMethodTheURLAndTheHostsTheRecordingHolds() async throws {
        let replay = try ReplayTransport(
            har: try file([
                harEntry("http://api.test/a"), harEntry("https://cdn.test/b"), harEntry("http://api.test:8080/c"),
            ]))
        let outcome = await send(TransportRequest(url: try #require(URL(string: "http://localhost:9/a"))), to: replay)
        let reason = try #require(missReason(outcome))
        #expect(reason.contains("GET http://localhost:9/a"))
        #expect(reason.contains("api.test:80, api.test:8080, cdn.test:443"))
    }

    @Test func aRedactedQueryValueMatchesAnyValue() async throws {
        let replay = try ReplayTransport(
            har: try file([harEntry("http://api.test/me?token=<redacted>&v=1", body: "{}")]))
        #expect(try await get("http://api.test/me?v=1&token=s3cr3t", from: replay).statusCode == 200)
        let noToken = await send(TransportRequest(url: try #require(URL(string: "http://api.test/me?v=1"))), to: replay)
        #expect(missReason(noToken) != nil)
    }

    @Test func entriesForOneRequestAnswerInOrderThenTheLastRepeats() async throws {
        let replay = try ReplayTransport(
            har: try file([
                harEntry("http://api.test/status", body: "1"), harEntry("http://api.test/other", body: "x"),
                harEntry("http://api.test/status", body: "2"), harEntry("http://api.test/status", body: "3"),
            ]))
        var answers: [String] = []
        for _ in 0..<5 { answers.append(try await get("http://api.test/status", from: replay).string ?? "") }
        #expect(answers == ["1", "2", "3", "3", "3"])
    }

    @Test func methodURLAndBodyComparesJSONAsValuesAndFormsInAnyOrder() async throws {
        let replay = try ReplayTransport(
            har: try file([
                harEntry(
                    "http://api.test/login", method: "POST", body: "json",
                    postData: [
                        "mimeType": "application/json",
                        "text": #"{"user":"ann","password":"<redacted>","meta":{"v":[1,true]}}"#,
                    ]),
                harEntry(
                    "http://api.test/form", method: "POST", body: "form",
                    postData: ["mimeType": "application/x-www-form-urlencoded", "text": "a=1&b=two+words"]),
                harEntry(
                    "http://api.test/raw", method: "POST", body: "raw",
                    postData: ["mimeType": "text/plain", "text": "abc"]),
                harEntry(
                    "http://api.test/stream", method: "POST", body: "unrecorded", postData: ["mimeType": "text/plain"]),
            ]), matching: .methodURLAndBody)
        func answer(_ url: String, _ body: String, type: String = "application/json") async throws -> String? {
            let request = TransportRequest(
                url: try #require(URL(string: url)), method: "POST", headers: ["Content-Type": type],
                body: Data(body.utf8))
            return try? await send(request, to: replay).get().string
        }
        #expect(
            try await answer("http://api.test/login", #"{"meta":{"v":[1,true]},"password":"x","user":"ann"}"#) == "json"
        )
        #expect(try await answer("http://api.test/login", #"{"meta":{"v":[1,1]},"password":"x","user":"ann"}"#) == nil)
        #expect(
            try await answer("http://api.test/login", #"{"password":"x","user":"bob","meta":{"v":[1,true]}}"#) == nil)
        let form = "application/x-www-form-urlencoded"
        #expect(try await answer("http://api.test/form", "b=two%20words&a=1", type: form) == "form")
        #expect(try await answer("http://api.test/form", "b=two&a=1", type: form) == nil)
        #expect(try await answer("http://api.test/raw", "abc", type: "text/plain") == "raw")
        #expect(try await answer("http://api.test/raw", "abd", type: "text/plain") == nil)
        #expect(try await answer("http://api.test/stream", "anything", type: "text/plain") == "unrecorded")
    }

    @Test func aTruncatedRecordedBodyMatchesABodyThatStartsWithIt() async throws {
        let replay = try ReplayTransport(
            har: try file([
                harEntry(
                    "http://api.test/upload", method: "POST", body: "ok",
                    postData: ["mimeType": "text/plain", "text": "xxxx", "comment": "Truncated from 10 bytes."])
            ]), matching: .methodURLAndBody)
        let request = TransportRequest(
            url: try #require(URL(string: "http://api.test/upload")), method: "POST", body: Data("xxxxyyyyyy".utf8))
        #expect(try await send(request, to: replay).get().string == "ok")
    }

    // MARK: Costs

    /// The outcome of `request`, answered before `send` returns, as a replay answers.
    private func answered(_ request: TransportRequest, by transport: any Transport) -> Result<Response, ErrandError>? {
        let outcome = Locked<Result<Response, ErrandError>?>(nil)
        let received = Locked((status: 0, body: Data()))
        _ = transport.send(request) { event in
            switch event {
            case .responseHead(let status, _): received.withLock { $0.status = status }
            case .body(let chunk): received.withLock { $0.body += chunk }
            case .completed(let error?): outcome.withLock { $0 = .failure(error) }
            case .completed(nil):
                let (status, body) = received.withLock { $0 }
                outcome.withLock { $0 = .success(Response(statusCode: status, data: body)) }
            default: break
            }
        }
        return outcome[\.self]
    }

    @Test func manyLargeRecordedJSONBodiesAreParsedOnceNotForEveryRequest() throws {
        // 100 searches on one route, each with a 23 KB JSON body that differs only at its end.
        let items = (0..<2000).map { "item-\($0)" }
        func body(_ n: Int) throws -> String {
            String(decoding: try JSONSerialization.data(withJSONObject: ["items": items, "n": n]), as: UTF8.self)
        }
        let entries = try (0..<100).map { n in
            harEntry(
                "https://api.test/search", method: "POST", body: "{\"n\": \(n)}",
                postData: ["mimeType": "application/json", "text": try body(n)])
        }
        let replay = try ReplayTransport(har: file(entries), matching: .methodURLAndBody)
        let request = TransportRequest(
            url: try #require(URL(string: "https://api.test/search")), method: "POST",
            headers: ["Content-Type": "application/json"], body: Data(try body(99).utf8))
        for _ in 0..<20 {
            let response = try #require(answered(request, by: replay)).get()
            #expect(response.data == Data("{\"n\": 99}".utf8))
        }
        // Each recorded JSON body is held parsed from the moment the file is read. Parsing every
        // candidate's body for every request took about 210 ms a request here (BENCHMARKS.md).
        let recorded = try ReplayBody(HTTPArchive.PostData(mimeType: "application/json", text: try body(1)))
        guard case .recorded(.json) = recorded else {
            Issue.record("a recorded JSON body is kept as text, to be parsed again for every request: \(recorded)")
            return
        }
    }

    // MARK: Files others wrote

    @Test func aHARMitmproxyWroteReplays() async throws {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/mitmproxy-httpbin.har")
        let replay = try ReplayTransport(har: fixture, matching: .methodURLAndBody)
        let got = try await get("http://127.0.0.1:18080/get?a=1&b=2", from: replay)
        #expect(got.statusCode == 200 && (got.object["args"] as? [String: String]) == ["a": "1", "b": "2"])
        let posted = try await post("http://127.0.0.1:18080/post", json: #"{"level":3,"name":"ann"}"#, to: replay).get()
        #expect((posted.object["json"] as? [String: Any])?["name"] as? String == "ann")
        #expect(try await get("http://127.0.0.1:18080/status/404", from: replay).statusCode == 404)
        let bytes = try await get("http://127.0.0.1:18080/bytes/16?seed=7", from: replay)
        #expect(bytes.data == Data(base64Encoded: "pU3KGCUwux1tEyze1iN7Lg=="))
        #expect(bytes.value(forHeader: "Content-Type") == "application/octet-stream")
    }

    @Test func aBrowsersRedirectIsFollowedAndItsEncodingHeadersDropped() async throws {
        let replay = try ReplayTransport(
            har: try file([
                harEntry("https://site.test/old", method: "GET", status: 301, headers: ["location": "/new"]),
                harEntry(
                    "https://site.test/new", method: "GET", body: "<p>new</p>",
                    headers: [
                        "content-type": "text/html", "content-encoding": "br", "content-length": "7",
                        ":status": "200", "set-cookie": "<redacted>",
                    ]),
            ]))
        let response = try await get("https://site.test/old", from: replay)
        #expect(response.statusCode == 200 && response.string == "<p>new</p>")
        #expect(response.headers == ["content-type": "text/html"])
    }

    @Test func anEntryWithoutAResponseReplaysAsALostConnection() async throws {
        let replay = try ReplayTransport(
            har: try file([harEntry("http://api.test/down", status: 0, headers: [:], comment: "No response arrived.")]))
        let outcome = await send(TransportRequest(url: try #require(URL(string: "http://api.test/down"))), to: replay)
        guard case .failure(.transport(let error)) = outcome else {
            Issue.record("expected a transport error, got \(outcome)")
            return
        }
        #expect(error.code == .networkConnectionLost && error.localizedDescription.contains("http://api.test/down"))
    }

    // MARK: Bad recordings

    private func initError(_ har: URL) -> ErrandError? {
        do {
            _ = try ReplayTransport(har: har)
            return nil
        } catch {
            return error
        }
    }

    @Test func aFileThatIsMissingOrNotHARFailsAtInitSayingWhy() throws {
        let missing = directory.appendingPathComponent("missing.har")
        guard case .fileSystem(let reason)? = initError(missing) else { throw Failure("missing file") }
        #expect(reason.contains(missing.path))

        let cases: [(String, String)] = [
            ("not json at all", "is not an HTTP Archive"),
            (#"{"log": {"version": "1.2", "creator": {"name": "x", "version": "1"}}}"#, #"missing key "entries""#),
            (
                #"{"log": {"version": "1.2", "creator": {"name": "x", "version": "1"}, "entries": [{"time": 1}]}}"#,
                "$.log.entries[0]"
            ),
        ]
        for (text, expected) in cases {
            let har = try file(Data(text.utf8), name: "bad.har")
            guard case .decoding(let reason)? = initError(har) else { throw Failure(text) }
            #expect(reason.contains(har.path) && reason.contains(expected), "\(reason)")
        }
    }

    @Test func anEntryThatCannotBeReplayedFailsAtInitNamingIt() throws {
        let cases: [([String: Any], String)] = [
            (
                harEntry("http://api.test/bin", body: "%%%not base64", encoding: "base64"),
                "response.content.text is not valid base64"
            ),
            (harEntry("http://api.test/z", body: "x", encoding: "gzip"), #"encoding "gzip""#),
            (harEntry("/relative", body: "x"), "the URL is not absolute"),
            (harEntry("http://api.test/", method: "", body: "x"), "the method is empty"),
            (harEntry("http://api.test/s", status: 1200), "the status 1200"),
            (
                harEntry(
                    "http://api.test/p", method: "POST",
                    postData: ["mimeType": "x", "text": "!!", "_encoding": "base64"]),
                "request.postData is not valid base64"
            ),
        ]
        for (bad, expected) in cases {
            let har = try file([harEntry("http://api.test/fine"), bad], name: "bad-entry.har")
            guard case .decoding(let reason)? = initError(har) else { throw Failure(expected) }
            #expect(reason.contains("log.entries[1]") && reason.contains(expected), "\(reason)")
        }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = "no error for: \(description)" }
    }
}
