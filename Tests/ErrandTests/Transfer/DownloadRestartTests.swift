import Errand
import Foundation
import Testing

/// What a user writes first to restart a cancelled download: wait for the first task to end by
/// any sign it gives — its value, its progress stream — then start again. The file must be free
/// by then. The race lasted microseconds, so each test restarts many times.
@Suite("Restarting a cancelled download")
struct DownloadRestartTests {
    private static let rounds = 1500

    private static func target() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("errand-restart-\(UUID().uuidString).bin").path
    }

    /// Starts `request`, which claims its file at once: `nil`, recorded as a failure, when the
    /// file was still claimed.
    private static func start(_ request: DownloadRequest, on agent: NetworkAgent) -> RequestTask? {
        let task = agent.start(request)
        #expect(task.error == nil, "the restart failed: \(task.error.map(String.init(describing:)) ?? "")")
        return task.error == nil ? task : nil
    }

    /// Cancels `task` from another thread once its request was sent.
    private static func cancelWhenSent(_ task: RequestTask, _ transport: ManualTransport, count: Int) async throws {
        _ = try #require(await transport.sent(count: count))
        DispatchQueue.global().async { task.cancel() }
    }

    @Test func aRestartAfterTheValueReportedCancelledFindsTheFileFree() async throws {
        let transport = ManualTransport()
        let agent = NetworkAgent.testing(transport)
        let request = DownloadRequest(url: "/file.bin", resumableDownloadPath: Self.target())
        for round in 1...Self.rounds {
            guard let task = Self.start(request, on: agent) else { return }
            try await Self.cancelWhenSent(task, transport, count: round)
            _ = try? await task.value
            #expect(task.error == .cancelled)
        }
    }

    @Test func aRestartWhenTheProgressStreamEndedFindsTheFileFree() async throws {
        let transport = ManualTransport()
        let agent = NetworkAgent.testing(transport)
        let request = DownloadRequest(url: "/file.bin", resumableDownloadPath: Self.target())
        for round in 1...Self.rounds {
            guard let task = Self.start(request, on: agent) else { return }
            let progress = task.downloadProgress
            try await Self.cancelWhenSent(task, transport, count: round)
            for await _ in progress {}
            #expect(task.error == .cancelled)
        }
    }

    /// A cancel that lands as the response ends, while the pipeline concludes the file: the task
    /// must not end before the file is let go, or that conclusion moves the next start's partial.
    @Test func aCancelAsTheResponseEndsLetsGoOfTheFileBeforeTheTaskEnds() async throws {
        let transport = ManualTransport()
        let agent = NetworkAgent.testing(transport)
        let request = DownloadRequest(url: "/file.bin", resumableDownloadPath: Self.target())
        for round in 1...Self.rounds {
            guard let task = Self.start(request, on: agent) else { return }
            let sent = try #require(await transport.sent(count: round)?.last)
            let body = "round \(round)"
            DispatchQueue.global().async { sent.respondOnce(body: body) }
            DispatchQueue.global().async { task.cancel() }
            _ = try? await task.value
            #expect(task.error == nil || task.error == .cancelled, "round \(round): \(String(describing: task.error))")
            if task.error == nil {
                let file = try #require(task.response?.fileURL)
                #expect(try String(contentsOf: file, encoding: .utf8) == body)
            }
        }
    }

    @Test func aRestartOverHTTPWhenTheProgressStreamEndedFindsTheFileFree() async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent()
        // Large enough that the partial, growing by what each round gets before its cancel, never completes.
        let request = DownloadRequest(
            url: "/download/\(64 << 20)?rate=4000000", resumableDownloadPath: fixture.path("f.bin"))
        for _ in 0..<100 {
            guard let task = Self.start(request, on: agent) else { return }
            var progress = task.downloadProgress.makeAsyncIterator()
            _ = await progress.next()
            task.cancel()
            while await progress.next() != nil {}
            // On a busy machine the cancel may land after the last byte: the download is done,
            // and the next round starts a new one.
            if task.error == nil { try FileManager.default.removeItem(atPath: request.resumableDownloadPath ?? "") }
            #expect(
                task.error == .cancelled || task.error == nil,
                "ended with \(task.error.map(String.init(describing:)) ?? "")")
        }
    }
}
