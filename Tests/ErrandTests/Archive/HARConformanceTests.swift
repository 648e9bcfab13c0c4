import ErrandScenarios
import Foundation
import Testing

@testable import Errand

/// The python `.ci/run` installs haralyzer and jsonschema for; unset, these tests are skipped.
private let harPython = ProcessInfo.processInfo.environment["ERRAND_HAR_PYTHON"].flatMap { $0.isEmpty ? nil : $0 }

/// HTTP Archives Errand writes, checked by tools it did not write: a HAR 1.2 JSON schema
/// (jsonschema) and haralyzer, through `Tests/ErrandInteropTests/HARCheck/check_har.py`.
@Suite(
    "HAR files checked by haralyzer and a HAR 1.2 schema (ERRAND_HAR_PYTHON)",
    .enabled(if: harPython != nil, "ERRAND_HAR_PYTHON is not set: the HAR checks are skipped"))
struct HARConformanceTests {
    private static let checker = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("ErrandInteropTests/HARCheck/check_har.py")

    /// Runs the checker on `file`; what it printed, and whether it passed.
    private func check(_ file: URL) async throws -> (output: String, passed: Bool) {
        let python = try #require(harPython)
        return try await onOwnThread {
            let child = try ChildProcess(python, [Self.checker.path, file.path])
            child.closeInput()
            let output = String(decoding: child.readToEnd(), as: UTF8.self)
            return (output, child.waitForExit() == 0)
        }
    }

    @Test func aRecordingOfEveryKindOfExchangePassesBothChecks() async throws {
        let fixture = try PipelineFixture()
        defer { fixture.server.stop() }
        let recorder = HARRecorder(redaction: .default.adding(jsonFields: ["password"]))
        fixture.config.addEventMonitor(recorder)
        fixture.config.addInterceptor(RetryPolicy())
        let agent = fixture.makeAgent()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("errand-har-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }

        var expected = 0
        func run(_ request: any BaseRequest) async {
            _ = await agent.finishedTask(request)
            expected += 1
        }
        await run(AgentTests.Request("/get?name=ann"))
        await run(AgentTests.Request("/status/404"))
        await run(AgentTests.Request("/redirect-to?url=/get"))
        await run(AgentTests.Request("/bytes/64?seed=3"))
        await run(
            UploadRequest(url: "/post", arguments: ["user": "ann", "password": "s3cret-password"]))
        await run(
            UploadRequest(url: "/post") { form in
                form.append(Data("hello".utf8), name: "note", fileName: "note.txt", mimeType: "text/plain")
            })
        await run(
            DownloadRequest(url: "/download/100000", resumableDownloadPath: folder.appendingPathComponent("d.bin").path)
        )
        async let retried = agent.finishedTask(FlakyApi(url: "/flaky/har-check?failures=1"))
        await fixture.timer.waitForRequests(1)
        fixture.timer.fireAll()
        _ = await retried
        expected += 1

        try await eventually { recorder.entryCount == expected }
        let file = folder.appendingPathComponent("session.har")
        try recorder.write(to: file)
        let (output, passed) = try await check(file)
        #expect(passed, "\(output)")
        #expect(output.contains("\(expected) entries"), "\(output)")
        #expect(!String(decoding: recorder.harData(), as: UTF8.self).contains("s3cret-password"))
    }

    @Test func aFileReplayTransportRecordedPassesBothChecks() async throws {
        let fixture = try PipelineFixture()
        defer { fixture.server.stop() }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("errand-replay-\(UUID()).har")
        defer { try? FileManager.default.removeItem(at: file) }
        let recording = try ReplayTransport(har: file, onMissing: .record(via: CurlTransport(), into: file))
        let agent = fixture.makeAgent(transport: recording)
        var missing = HTTPBinRequest("/status/404")
        missing.acceptedStatusCodes = [404]
        _ = try await agent.response(HTTPBinRequest("/get?name=ann"))
        _ = try await agent.response(missing)
        _ = try await agent.response(HTTPBinRequest("/post", method: .post, arguments: ["user": "ann"]))
        let (output, passed) = try await check(file)
        #expect(passed, "\(output)")
        #expect(output.contains("3 entries"), "\(output)")
    }

    @Test func theCheckerRefusesAFileThatIsNotHAR() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("errand-not-har-\(UUID()).har")
        try Data(#"{"log": {"version": "1.2", "entries": [{"time": -5}]}}"#.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let (output, passed) = try await check(file)
        #expect(!passed, "\(output)")
    }

    @Test func aHARMitmproxyWroteAlsoPasses() async throws {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/mitmproxy-httpbin.har")
        let (output, passed) = try await check(fixture)
        #expect(passed, "\(output)")
    }
}

@Suite("HAR checks in CI")
struct HARConformanceInCITests {
    @Test(
        "the HAR checks are not silently skipped in CI",
        .enabled(if: ProcessInfo.processInfo.environment["CI"] == "true"))
    func theCheckerIsConfiguredInCI() {
        #expect(harPython != nil, "CI must run the HAR checks: set ERRAND_HAR_PYTHON")
    }
}
