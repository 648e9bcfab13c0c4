import ErrandScenarios
import ErrandTestServer
import Foundation
import Testing

@testable import Errand

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("HAR recorder")
struct HARRecorderTests {
    let fixture: PipelineFixture

    init() throws {
        fixture = try PipelineFixture()
    }

    /// An agent reporting to `recorder`, with the fixture configuration's cookie jar of its own.
    private func agent(recording recorder: HARRecorder) -> NetworkAgent {
        fixture.config.addEventMonitor(recorder)
        return fixture.makeAgent()
    }

    /// The recording, decoded, once it holds `count` entries.
    private func archive(of recorder: HARRecorder, entries count: Int = 1) async throws -> HTTPArchive {
        try await eventually { recorder.entryCount == count }
        return try JSONDecoder().decode(HTTPArchive.self, from: recorder.harData())
    }

    private func entry(of recorder: HARRecorder) async throws -> HTTPArchive.Entry {
        try #require(try await archive(of: recorder).log.entries.first)
    }

    // MARK: Exchanges

    @Test func aSuccessIsOneEntryWithTheRequestResponseAndTimings() async throws {
        defer { fixture.server.stop() }
        let recorder = HARRecorder()
        var request = HTTPBinRequest("/get?page=2")
        request.headers["X-Trace"] = "abc"
        let task = await agent(recording: recorder).finishedTask(request)
        let response = try #require(task.response)
        let entry = try await entry(of: recorder)

        #expect(entry.request.method == "GET")
        #expect(entry.request.url == fixture.server.baseURL + "/get?page=2")
        #expect(entry.request.httpVersion.hasPrefix("HTTP/"))
        #expect(entry.request.headers.contains(HTTPArchive.NameValue(name: "X-Trace", value: "abc")))
        #expect(entry.request.queryString == [HTTPArchive.NameValue(name: "page", value: "2")])
        #expect(entry.request.postData == nil && entry.request.bodySize == 0 && entry.request.headersSize == -1)
        #expect(entry.response.status == 200 && entry.response.statusText == "OK")
        #expect(entry.response.content.mimeType.contains("json") && entry.response.content.encoding == nil)
        #expect(entry.response.content.text == response.string)
        #expect(entry.response.content.size == response.data.count && entry.response.bodySize == response.data.count)
        #expect(entry.response.redirectURL == "" && entry.response.headersSize == -1)
        #expect(entry.comment == nil)

        let timings = entry.timings
        for phase in [timings.send, timings.wait, timings.receive] { #expect(phase >= 0) }
        for phase in [timings.blocked, timings.dns, timings.connect, timings.ssl] {
            let value = try #require(phase)
            #expect(value == -1 || value >= 0)
        }
        #expect(timings.blocked == -1)
        let phases = [timings.dns, timings.connect, timings.send, timings.wait, timings.receive].compactMap { $0 }
        #expect(abs(entry.time - phases.filter { $0 >= 0 }.reduce(0, +)) < 0.01)
        #expect(entry.serverIPAddress == task.metrics?.remoteAddress)
        #expect(entry.request.httpVersion == task.metrics?.httpVersion ?? "HTTP/1.1")

        // ISO 8601 with milliseconds and a time zone.
        #expect(
            entry.startedDateTime.range(
                of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}(Z|[+-]\d\d:\d\d)$"#, options: .regularExpression) != nil)
        let started = try Date(
            entry.startedDateTime, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        #expect(abs(started.timeIntervalSinceNow) < Double(timingBound(.seconds(60)).components.seconds))

        let json = try #require(try JSONSerialization.jsonObject(with: recorder.harData()) as? [String: Any])
        let log = try #require(json["log"] as? [String: Any])
        #expect(log["version"] as? String == "1.2")
        #expect((log["creator"] as? [String: Any])?["name"] as? String == "Errand")
        let entries = try #require(log["entries"] as? [[String: Any]])
        #expect(entries.count == 1)
        #expect(entries[0]["cache"] as? [String: Any] != nil)
        #expect(["startedDateTime", "time", "request", "response", "timings"].allSatisfy { entries[0][$0] != nil })
    }

    @Test func aRejectedStatusIsRecordedWithItsBody() async throws {
        defer { fixture.server.stop() }
        let recorder = HARRecorder()
        var request = HTTPBinRequest("/no-such-route")
        request.responseSerializerType = .data
        let task = await agent(recording: recorder).finishedTask(request)
        #expect(task.error == .statusCode(404))
        let entry = try await entry(of: recorder)
        #expect(entry.response.status == 404 && entry.response.statusText == "Not Found")
        #expect(entry.response.content.text?.contains("Not Found") == true)
        #expect(entry.response.content.size == task.response?.data.count)
        #expect(entry.comment?.contains("Failed") == true)
    }

    @Test func aRetriedRequestIsRecordedOnceByItsLastAttempt() async throws {
        defer { fixture.server.stop() }
        fixture.config.addInterceptor(RetryPolicy())
        let recorder = HARRecorder()
        async let finished = agent(recording: recorder).finishedTask(FlakyApi(url: "/flaky/recorded?failures=1"))
        await fixture.timer.waitForRequests(1)
        fixture.timer.fireAll()
        #expect(await finished.attemptCount == 2)
        let entry = try await entry(of: recorder)
        #expect(entry.response.status == 200)
        #expect(entry.comment?.contains("Attempt 2") == true)
    }

    @Test func aResponseFromTheCacheIsNotRecorded() async throws {
        defer { fixture.server.stop() }
        fixture.config.cacheDirectory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "errand-har-\(UUID())")
        let recorder = HARRecorder()
        let agent = agent(recording: recorder)
        var cached = HTTPBinRequest("/get?har=\(UUID())")
        cached.responseSerializerType = .data
        struct Cached: BaseRequest {
            var url: String
            var cacheTimeInSeconds: Int { CacheLifetime.hour }
        }
        let request = Cached(url: cached.url)
        _ = try await agent.response(request)
        try await eventually { recorder.entryCount == 1 }
        await agent.waitForCacheWrites()
        #expect(try await agent.response(request).isDataFromCache)
        // One more network request, to know the monitor has seen the cached one before it.
        _ = try await agent.response(HTTPBinRequest("/get"))
        try await eventually { recorder.entryCount == 2 }
        try await Task.sleep(for: .milliseconds(50))
        #expect(recorder.entryCount == 2)
    }

    // MARK: Bodies

    @Test func aJSONBodyIsRecordedWithItsMaskedFields() async throws {
        defer { fixture.server.stop() }
        let recorder = HARRecorder(redaction: Redaction.default.adding(jsonFields: ["password"]))
        var request = HTTPBinRequest(
            "/post", method: .post,
            arguments: ["user": "ann", "password": "hunter2-secret", "nested": ["password": "inner-secret"]])
        request.requestSerializerType = .json
        _ = try await agent(recording: recorder).response(request)
        let entry = try await entry(of: recorder)
        let postData = try #require(entry.request.postData)
        #expect(postData.mimeType.contains("json") && postData.encoding == nil)
        let sent = try #require(
            try JSONSerialization.jsonObject(with: Data((postData.text ?? "").utf8)) as? [String: Any])
        #expect(sent["user"] as? String == "ann")
        #expect(sent["password"] as? String == Redactor.placeholder)
        #expect((sent["nested"] as? [String: Any])?["password"] as? String == Redactor.placeholder)
        #expect(entry.request.bodySize > 0)
        // httpbin echoes the body, once as JSON and once as the text it was: both are masked.
        let echoed = try #require(entry.response.content.text)
        #expect(!echoed.contains("hunter2-secret") && !echoed.contains("inner-secret"))
        // Masking made the echo shorter; that does not make it a cut body, which would not replay.
        #expect(entry.response.content.comment == nil && postData.comment == nil)
        #expect(entry.response.content.size == entry.response.bodySize)
        #expect(!String(decoding: recorder.harData(), as: UTF8.self).contains("secret\""))
    }

    @Test func aFormBodyIsRecordedWithParamsAndMaskedQueryItems() async throws {
        defer { fixture.server.stop() }
        let recorder = HARRecorder(redaction: Redaction(queryItems: ["token"]))
        var request = HTTPBinRequest("/post", method: .post)
        request.headers["Content-Type"] = "application/x-www-form-urlencoded"
        request.uploadBody = .data(Data("a=1&token=f0rm-secret".utf8))
        _ = try await agent(recording: recorder).response(request)
        let postData = try #require(try await entry(of: recorder).request.postData)
        #expect(postData.text == "a=1&token=\(Redactor.placeholder)")
        #expect(
            postData.params == [
                HTTPArchive.Param(name: "a", value: "1"), HTTPArchive.Param(name: "token", value: Redactor.placeholder),
            ])
        #expect(!String(decoding: recorder.harData(), as: UTF8.self).contains("f0rm-secret"))
    }

    @Test func aBinaryBodyIsBase64ThatDecodesToTheBytes() async throws {
        defer { fixture.server.stop() }
        let recorder = HARRecorder()
        var request = HTTPBinRequest("/bytes/64?seed=7")
        request.responseSerializerType = .data
        let response = try await agent(recording: recorder).response(request)
        let content = try await entry(of: recorder).response.content
        #expect(content.encoding == "base64" && content.size == 64 && content.comment == nil)
        #expect(Data(base64Encoded: content.text ?? "") == response.data)
    }

    @Test func aBodyLongerThanTheMaximumIsTruncatedSayingSo() async throws {
        defer { fixture.server.stop() }
        let recorder = HARRecorder(maximumBodySize: 100)
        var request = HTTPBinRequest("/bytes/1000?seed=3")
        request.responseSerializerType = .data
        let response = try await agent(recording: recorder).response(request)
        let content = try await entry(of: recorder).response.content
        #expect(content.size == 1000)
        #expect(Data(base64Encoded: content.text ?? "") == response.data.prefix(100))
        #expect(content.comment == "Truncated from 1000 bytes.")
    }

    @Test func aStreamedBodyIsRecordedAsItWasRead() async throws {
        defer { fixture.server.stop() }
        let recorder = HARRecorder()
        let stream = try await agent(recording: recorder).stream(HTTPBinRequest("/lines?count=40&bytes=50"))
        let read = try await stream.collect(upTo: 1 << 20)
        let content = try await entry(of: recorder).response.content
        #expect(content.size == read.count && read.count == 40 * 51)
        #expect(content.text.map { Data($0.utf8) } == read)
        #expect(content.comment == nil)
    }

    @Test func aStreamLeftEarlyIsRecordedWithItsHeadAndWhatArrived() async throws {
        defer { fixture.server.stop() }
        let recorder = HARRecorder()
        let stream = try await agent(recording: recorder).stream(HTTPBinRequest("/sse/endless"))
        var chunks = stream.makeAsyncIterator()
        let first = try #require(try await chunks.next())
        stream.cancel()
        let entry = try await entry(of: recorder)
        #expect(entry.response.status == 200)
        #expect(entry.response.content.mimeType.hasPrefix("text/event-stream"))
        #expect(entry.response.content.text?.hasPrefix(String(decoding: first, as: UTF8.self)) == true)
        #expect(entry.comment?.contains("Failed") == true, "the entry says the exchange did not end by itself")
    }

    @Test func aStreamedBodyLongerThanTheMaximumKeepsItsStartAndSize() async throws {
        defer { fixture.server.stop() }
        let recorder = HARRecorder(maximumBodySize: 100)
        let stream = try await agent(recording: recorder).stream(HTTPBinRequest("/lines?count=40&bytes=50"))
        let read = try await stream.collect(upTo: 1 << 20)
        let content = try await entry(of: recorder).response.content
        #expect(content.size == read.count)
        #expect(content.text.map { Data($0.utf8) } == read.prefix(100))
        #expect(content.comment == "Truncated from \(read.count) bytes.")
    }

    @Test func aBodyFileIsRecordedUpToTheMaximum() async throws {
        defer { fixture.server.stop() }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("errand-har-\(UUID()).txt")
        try Data(repeating: UInt8(ascii: "x"), count: 300).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let recorder = HARRecorder(maximumBodySize: 200)
        var request = HTTPBinRequest("/post", method: .post)
        request.headers["Content-Type"] = "text/plain"
        request.uploadBody = .file(file)
        _ = try await agent(recording: recorder).response(request)
        let entry = try await entry(of: recorder)
        let postData = try #require(entry.request.postData)
        #expect(postData.text == String(repeating: "x", count: 200))
        #expect(postData.comment == "Truncated from 300 bytes.")
        #expect(entry.request.bodySize == 300)
    }

    @Test func aMultipartUploadsTemporaryFileIsRecordedThoughItIsGoneWhenTheQueueGetsToIt() async throws {
        defer { fixture.server.stop() }
        let recorder = HARRecorder(maximumBodySize: 200)
        // Delivered long after the request finished and its temporary body file was deleted.
        fixture.config.addEventMonitor(
            recorder, backlogLimit: EventMonitorChannel.defaultBacklogLimit, gatheringDelay: .milliseconds(300))
        var request = HTTPBinRequest("/post", method: .post, arguments: ["title": "holiday"])
        // Past MultipartFormData.inMemoryLimit: the body is encoded into a temporary file.
        let big = Data(repeating: UInt8(ascii: "z"), count: MultipartFormData.inMemoryLimit + 1000)
        request.constructingBody = { $0.append(big, name: "log", fileName: "log.txt") }
        _ = try await fixture.makeAgent().response(request)
        let entry = try #require(try await archive(of: recorder).log.entries.first)
        let postData = try #require(entry.request.postData)
        #expect(postData.comment?.contains("could not be read") != true, "\(postData.comment ?? "")")
        #expect(postData.comment?.hasPrefix("Truncated from") == true)
        let recorded = Data(base64Encoded: postData.text ?? "") ?? Data(postData.text?.utf8 ?? "".utf8)
        #expect(String(decoding: recorded, as: UTF8.self).contains("name=\"title\""))
        #expect(entry.request.bodySize > big.count)
    }

    // MARK: Redaction

    @Test func theDefaultRedactionMasksAuthorizationAndCookies() async throws {
        defer { fixture.server.stop() }
        let recorder = HARRecorder()
        var request = HTTPBinRequest("/response-headers?Set-Cookie=sid%3Dset-value%3B%20Path%3D%2F%3B%20HttpOnly")
        request.headers["Authorization"] = "Bearer t0ken-secret"
        request.headers["Cookie"] = "session=c00kie-secret; theme=dark"
        _ = try await agent(recording: recorder).response(request)
        let entry = try await entry(of: recorder)
        let placeholder = Redactor.placeholder
        #expect(entry.request.headers.first { $0.name == "Authorization" }?.value == placeholder)
        #expect(entry.request.headers.first { $0.name == "Cookie" }?.value == placeholder)
        #expect(
            entry.request.cookies == [
                HTTPArchive.Cookie(name: "session", value: placeholder),
                HTTPArchive.Cookie(name: "theme", value: placeholder),
            ])
        #expect(entry.response.headers.first { $0.name.lowercased() == "set-cookie" }?.value == placeholder)
        #expect(
            entry.response.cookies == [HTTPArchive.Cookie(name: "sid", value: placeholder, path: "/", httpOnly: true)])
        let text = String(decoding: recorder.harData(), as: UTF8.self)
        #expect(!text.contains("t0ken-secret") && !text.contains("c00kie-secret"))
    }

    @Test func maskedQueryItemsAreMaskedInTheURLTheQueryStringAndAnEcho() async throws {
        defer { fixture.server.stop() }
        let recorder = HARRecorder(redaction: Redaction(queryItems: ["api_key"]))
        _ = try await agent(recording: recorder).response(HTTPBinRequest("/get?api_key=k3y-secret&page=2"))
        let entry = try await entry(of: recorder)
        #expect(entry.request.url.hasSuffix("/get?api_key=\(Redactor.placeholder)&page=2"))
        #expect(
            entry.request.queryString == [
                HTTPArchive.NameValue(name: "api_key", value: Redactor.placeholder),
                HTTPArchive.NameValue(name: "page", value: "2"),
            ])
        #expect(!String(decoding: recorder.harData(), as: UTF8.self).contains("k3y-secret"))
    }

    @Test func aSecretNeverAppearsInTheArchive() async throws {
        defer { fixture.server.stop() }
        let secrets = ["hunter2-secret", "t0ken-secret", "k3y-secret", "c00kie-secret"]
        let recorder = HARRecorder(
            redaction: Redaction.default.adding(queryItems: ["api_key"], jsonFields: ["password"]), maximumBodySize: 64)
        let agent = agent(recording: recorder)
        var json = HTTPBinRequest("/post?api_key=k3y-secret", method: .post, arguments: ["password": "hunter2-secret"])
        json.requestSerializerType = .json
        json.headers["Authorization"] = "Bearer t0ken-secret"
        json.headers["Cookie"] = "session=c00kie-secret"
        _ = try await agent.response(json)
        // A binary body: what is masked must not survive base64 either.
        var binary = HTTPBinRequest("/anything?api_key=k3y-secret", method: .put)
        binary.headers["Content-Type"] = "application/octet-stream"
        binary.uploadBody = .data(Data([0xFF, 0xFE]) + Data("k3y-secret".utf8) + Data([0x00, 0xC3]))
        binary.responseSerializerType = .data
        _ = try await agent.response(binary)
        let archive = try await archive(of: recorder, entries: 2)
        let raw = String(decoding: recorder.harData(), as: UTF8.self)
        var bodies = [raw]
        for entry in archive.log.entries {
            if entry.request.postData?.encoding == "base64", let text = entry.request.postData?.text {
                bodies.append(String(decoding: try #require(Data(base64Encoded: text)), as: UTF8.self))
            }
            if entry.response.content.encoding == "base64", let text = entry.response.content.text {
                bodies.append(String(decoding: try #require(Data(base64Encoded: text)), as: UTF8.self))
            }
        }
        #expect(bodies.count > 1, "the binary body was recorded as base64")
        for secret in secrets {
            #expect(!bodies.contains { $0.contains(secret) }, "\(secret) leaked")
        }
    }

    /// The recording as text, and each base64 body in it decoded: a secret must be in none of them.
    private func texts(of recorder: HARRecorder) throws -> [String] {
        let data = recorder.harData()
        var texts = [String(decoding: data, as: UTF8.self)]
        for entry in try JSONDecoder().decode(HTTPArchive.self, from: data).log.entries {
            if entry.request.postData?.encoding == "base64", let text = entry.request.postData?.text {
                texts.append(String(decoding: try #require(Data(base64Encoded: text)), as: UTF8.self))
            }
            if entry.response.content.encoding == "base64", let text = entry.response.content.text {
                texts.append(String(decoding: try #require(Data(base64Encoded: text)), as: UTF8.self))
            }
        }
        return texts
    }

    @Test func aRefusedRedirectChainsLastURLIsMaskedInTheComment() async throws {
        defer { fixture.server.stop() }
        let recorder = HARRecorder(redaction: .default.adding(queryItems: ["access_token"]))
        // Each hop hands out a new access_token the first request never held.
        let task = await agent(recording: recorder).finishedTask(
            HTTPBinRequest("/fault/redirect-loop?n=0&mint=access_token"))
        guard case .redirectRefused(let reason) = task.error else {
            Issue.record("\(String(describing: task.error))")
            return
        }
        #expect(reason.contains("access_token=minted-"))
        let entry = try #require(try await archive(of: recorder).log.entries.first)
        let comment = try #require(entry.comment)
        #expect(comment.contains("access_token=\(Redactor.placeholder)"), "\(comment)")
        for text in try texts(of: recorder) {
            #expect(!text.contains("minted-"), "\(text)")
        }
    }

    @Test func aMultipartFieldNamedByJSONFieldsIsMasked() async throws {
        defer { fixture.server.stop() }
        let recorder = HARRecorder(redaction: .default.adding(jsonFields: ["password"]))
        var request = HTTPBinRequest(
            "/post", method: .post,
            arguments: ["user": "ann", "password": "hunter2-multipart", "account": ["password": "nested-multipart"]])
        request.constructingBody = { $0.append(Data("a note".utf8), name: "note", fileName: "note.txt") }
        let response = try await agent(recording: recorder).response(request)
        #expect((response.object["form"] as? [String: Any])?["password"] as? String == "hunter2-multipart")
        let entry = try #require(try await archive(of: recorder).log.entries.first)
        let postData = try #require(entry.request.postData)
        #expect(postData.mimeType.hasPrefix("multipart/form-data"))
        let texts = try texts(of: recorder)
        #expect(texts.count > 1, "the multipart body was recorded as base64")
        let body = try #require(Data(base64Encoded: postData.text ?? ""))
        let sent = String(decoding: body, as: UTF8.self)
        #expect(sent.contains("name=\"user\"\r\n\r\nann\r\n") && sent.contains("a note"))
        #expect(sent.contains("name=\"password\"\r\n\r\n\(Redactor.placeholder)\r\n"))
        for text in texts {
            #expect(!text.contains("hunter2-multipart") && !text.contains("nested-multipart"), "\(text)")
        }
    }

    @Test func aTokenAsAURLsUserIsMaskedAndScrubbedWhereverItReappears() async throws {
        defer { fixture.server.stop() }
        let recorder = HARRecorder()
        let url = fixture.server.baseURL.replacingOccurrences(of: "://", with: "://tok3n-as-user@") + "/headers"
        _ = try await agent(recording: recorder).response(HTTPBinRequest(url))
        let entry = try #require(try await archive(of: recorder).log.entries.first)
        #expect(entry.request.url.contains("://\(Redactor.placeholder)@"), "\(entry.request.url)")
        let basic = Data("tok3n-as-user:".utf8).base64EncodedString()
        for text in try texts(of: recorder) {
            #expect(!text.contains("tok3n-as-user") && !text.contains(basic), "\(text)")
        }
    }

    @Test func aURLsPasswordIsMaskedAndScrubbedFromTheAuthorizationBuiltFromIt() async throws {
        defer { fixture.server.stop() }
        let recorder = HARRecorder()
        let url =
            fixture.server.baseURL.replacingOccurrences(of: "://", with: "://ann-user:pa55-secret@")
            + "/basic-auth/ann-user/pa55-secret"
        let agent = agent(recording: recorder)
        _ = await agent.finishedTask(HTTPBinRequest(url))
        _ = await agent.finishedTask(
            HTTPBinRequest(
                fixture.server.baseURL.replacingOccurrences(of: "://", with: "://ann-user:pa55-secret@") + "/headers"))
        let entries = try await archive(of: recorder, entries: 2).log.entries
        for entry in entries {
            #expect(entry.request.url.contains("://\(Redactor.placeholder)@"), "\(entry.request.url)")
        }
        let basic = Data("ann-user:pa55-secret".utf8).base64EncodedString()
        for text in try texts(of: recorder) {
            for secret in ["pa55-secret", "ann-user", basic] {
                #expect(!text.contains(secret), "\(secret) in \(text)")
            }
        }
        // What was masked in the URLs still replays.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("errand-\(UUID()).har")
        defer { try? FileManager.default.removeItem(at: file) }
        try recorder.write(to: file)
        let replay = try ReplayTransport(har: file)
        #expect(replay.entryCount == 2)
        // The path the password was scrubbed from matches the request's.
        let replayed = try await NetworkAgent(config: fixture.config, transport: replay).response(HTTPBinRequest(url))
        #expect(replayed.statusCode == 200)
    }

    @Test func urlsQuotedInTextAreMaskedWhereverTheyStand() {
        defer { fixture.server.stop() }
        let redaction = Redaction(queryItems: ["access_token"])
        var masked: [String] = []
        let json = #"{"next": "https://h/p?access_token=abc123&x=1", "quoted": "say \"/r?access_token=def456\""}"#
        let maskedJSON = redaction.maskingURLs(in: json, masked: &masked)
        #expect(
            maskedJSON
                == #"{"next": "https://h/p?access_token=<redacted>&x=1", "quoted": "say \"/r?access_token=<redacted>\""}"#
        )
        #expect((try? JSONSerialization.jsonObject(with: Data(maskedJSON.utf8))) != nil)
        let error =
            "https://h/a?n=16&access_token=ghi789 redirects again; ftp://us3r:pa55@h/f?x=1, mail ann@example.com"
        #expect(
            redaction.maskingURLs(in: error, masked: &masked)
                == "https://h/a?n=16&access_token=<redacted> redirects again; ftp://<redacted>@h/f?x=1, mail ann@example.com"
        )
        for secret in ["abc123", "def456", "ghi789", "us3r", "pa55", Data("us3r:pa55".utf8).base64EncodedString()] {
            #expect(masked.contains(secret), "\(secret)")
        }
        #expect(redaction.url(string: "http://tok3n@h/") == "http://<redacted>@h/")
    }

    // MARK: Bounds and files

    @Test func pastTheEntryLimitTheOldestIsDropped() async throws {
        defer { fixture.server.stop() }
        let recorder = HARRecorder(maximumEntries: 2)
        let agent = agent(recording: recorder)
        for page in 1...3 {
            _ = try await agent.response(HTTPBinRequest("/get?n=\(page)"))
            // One at a time, so the order of the entries is the order of the requests.
            try await eventually { (try? urls(in: recorder))?.last?.hasSuffix("n=\(page)") == true }
        }
        let kept = try urls(in: recorder)
        #expect(recorder.entryCount == 2)
        #expect(kept.count == 2)
        #expect(kept[0].hasSuffix("/get?n=2") && kept[1].hasSuffix("/get?n=3"))
    }

    private func urls(in recorder: HARRecorder) throws -> [String] {
        try JSONDecoder().decode(HTTPArchive.self, from: recorder.harData()).log.entries.map(\.request.url)
    }

    @Test func writeSavesAFileThatReadsBack() async throws {
        defer { fixture.server.stop() }
        let recorder = HARRecorder()
        _ = try await agent(recording: recorder).response(HTTPBinRequest("/get"))
        try await eventually { recorder.entryCount == 1 }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("errand-\(UUID()).har")
        defer { try? FileManager.default.removeItem(at: file) }
        try recorder.write(to: file)
        let archive = try JSONDecoder().decode(HTTPArchive.self, from: Data(contentsOf: file))
        #expect(archive.log.version == "1.2" && archive.log.creator.name == "Errand" && archive.log.entries.count == 1)
    }

    @Test func writingWhereNoFileCanBeThrowsAFileSystemErrorNamingThePath() throws {
        defer { fixture.server.stop() }
        let blocker = FileManager.default.temporaryDirectory.appendingPathComponent("errand-har-\(UUID())")
        try Data("a file, not a folder".utf8).write(to: blocker)
        defer { try? FileManager.default.removeItem(at: blocker) }
        let target = blocker.appendingPathComponent("session.har")
        #expect {
            try HARRecorder().write(to: target)
        } throws: { error in
            guard case .fileSystem(let reason) = error as? ErrandError else { return false }
            return reason.contains(target.path)
        }
    }

    // MARK: Asking for the archive right after the requests

    /// How a test reads the recording.
    enum Reading: CaseIterable, Sendable {
        case write, harData, entryCount
    }

    /// The entries' URLs, read the way `reading` says, right after the requests returned.
    private func urlsRead(_ reading: Reading, from recorder: HARRecorder) throws -> [String] {
        switch reading {
        case .write:
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("errand-\(UUID()).har")
            defer { try? FileManager.default.removeItem(at: file) }
            try recorder.write(to: file)
            return try JSONDecoder().decode(HTTPArchive.self, from: Data(contentsOf: file)).log.entries.map(
                \.request.url)
        case .harData:
            return try urls(in: recorder)
        case .entryCount:
            let count = recorder.entryCount
            return try Array(urls(in: recorder).prefix(count))
        }
    }

    @Test(arguments: Reading.allCases)
    func anArchiveReadRightAfterTheLastRequestHoldsEveryFinishedExchange(_ reading: Reading) async throws {
        defer { fixture.server.stop() }
        let recorder = HARRecorder()
        // A monitor a long way behind: its batch is delivered 300 ms after its first event.
        fixture.config.addEventMonitor(
            recorder, backlogLimit: EventMonitorChannel.defaultBacklogLimit, gatheringDelay: .milliseconds(300))
        let agent = fixture.makeAgent()
        for n in 1...4 { _ = try await agent.response(HTTPBinRequest("/get?n=\(n)")) }
        let urls = try urlsRead(reading, from: recorder)
        #expect(urls == (1...4).map { fixture.server.baseURL + "/get?n=\($0)" })
    }

    @Test func theREADMEsRecordThenWriteHoldsEveryRequest() async throws {
        defer { fixture.server.stop() }
        let recorder = HARRecorder()
        let agent = agent(recording: recorder)
        for round in 1...5 {
            for n in 1...4 { _ = try await agent.response(HTTPBinRequest("/get?round=\(round)&n=\(n)")) }
            #expect(try urlsRead(.write, from: recorder).count == round * 4)
        }
    }

    @Test func readingWhileManyRequestsRunLosesNoExchange() async throws {
        defer { fixture.server.stop() }
        let recorder = HARRecorder()
        let agent = agent(recording: recorder)
        let count = 120
        // Readers take in posted events on their own threads while the queue delivers others:
        // an exchange whose didFinish were delivered before its willSend would be lost.
        let reading = Task.detached {
            var reads = 0
            while !Task.isCancelled {
                _ = recorder.entryCount
                reads += 1
                // A pause, not a yield: spinning would hold one of the pool's few threads for the
                // whole test, and slow every other test of the run.
                try? await Task.sleep(for: .milliseconds(1))
            }
            return reads
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in 0..<6 {
                group.addTask {
                    for n in stride(from: lane, to: count, by: 6) {
                        _ = try await agent.response(HTTPBinRequest("/get?n=\(n)"))
                    }
                }
            }
            try await group.waitForAll()
        }
        reading.cancel()
        #expect(await reading.value > 0)
        let urls = try urls(in: recorder)
        #expect(urls.count == count)
        #expect(Set(urls).count == count)
    }

    @Test func anotherMonitorMayReadTheRecordingFromItsOwnQueue() async throws {
        defer { fixture.server.stop() }
        let recorder = HARRecorder()
        /// Reads the recording when a request finishes, on its own monitor queue.
        final class Reader: EventMonitor {
            let recorder: HARRecorder
            let counts = Locked<[Int]>([])
            init(_ recorder: HARRecorder) { self.recorder = recorder }
            func request(_ task: RequestTask, didFinish result: Result<Response, ErrandError>) {
                let count = recorder.entryCount
                counts.withLock { $0.append(count) }
            }
        }
        let reader = Reader(recorder)
        // The recorder's queue far behind the reader's.
        fixture.config.addEventMonitor(
            recorder, backlogLimit: EventMonitorChannel.defaultBacklogLimit, gatheringDelay: .milliseconds(300))
        fixture.config.addEventMonitor(reader)
        let agent = fixture.makeAgent()
        for n in 1...3 { _ = try await agent.response(HTTPBinRequest("/get?n=\(n)")) }
        try await eventually { reader.counts[\.self].count == 3 }
        // The recorder was added first, so each request's didFinish was posted to it first: when
        // the reader hears of the n-th, the recording holds it (and perhaps later ones).
        let counts = reader.counts[\.self]
        #expect(zip(counts, 1...3).allSatisfy { $0 >= $1 }, "\(counts)")
    }

    // MARK: Reading

    @Test func aBrowsersFileWithOptionalFieldsMissingAndExtraFieldsReads() throws {
        defer { fixture.server.stop() }
        let har = """
            {"log": {"version": "1.2", "creator": {"name": "WebInspector", "version": "537.36"}, "pages": [],
              "entries": [{"_initiator": {"type": "other"}, "startedDateTime": "2024-01-02T03:04:05.678+01:00",
                "time": 12.5, "cache": {},
                "request": {"method": "POST", "url": "https://example.com/a?b=1", "httpVersion": "h2",
                  "headers": [{"name": "content-type", "value": "application/json"}], "cookies": [],
                  "queryString": [{"name": "b", "value": "1"}], "headersSize": -1, "bodySize": 2,
                  "postData": {"mimeType": "application/json", "text": "{}"}},
                "response": {"status": 200, "statusText": "", "httpVersion": "h2", "headers": [], "cookies": [],
                  "content": {"size": 2, "mimeType": "application/json", "text": "{}", "_transferSize": 90},
                  "redirectURL": "", "headersSize": -1, "bodySize": -1, "_error": null},
                "timings": {"send": 0.1, "wait": 10, "receive": 2.4, "_blocked_queueing": 1}}]}}
            """
        let archive = try JSONDecoder().decode(HTTPArchive.self, from: Data(har.utf8))
        let entry = try #require(archive.log.entries.first)
        #expect(entry.request.postData?.text == "{}" && entry.request.postData?.params == nil)
        #expect(entry.timings.dns == nil && entry.timings.wait == 10)
        #expect(entry.serverIPAddress == nil && entry.response.content.encoding == nil)
    }

    // MARK: Redaction values

    @Test func redactionDefaultsAndAdding() {
        defer { fixture.server.stop() }
        #expect(Redaction.default.headers == ["Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie"])
        #expect(Redaction.default.queryItems.isEmpty && Redaction.default.jsonFields.isEmpty)
        #expect(Redaction() == Redaction(headers: [], queryItems: [], jsonFields: []))
        let added = Redaction.default.adding(headers: ["X-Api-Key"], queryItems: ["sig"], jsonFields: ["pin"])
        #expect(added.headers.count == 5 && added.queryItems == ["sig"] && added.jsonFields == ["pin"])
        #expect(added.masksHeader("x-api-key") && added.masksHeader("AUTHORIZATION") && !added.masksHeader("Accept"))
    }
}
