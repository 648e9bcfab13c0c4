import Foundation
import Testing

@testable import Errand

/// An `async` caller on CurlTransport judges its response on its own task: the curl thread hands
/// the events over directly, but runs none of the code a request brings, which could block it.
@Suite struct ResponseWorkThreadTests {
    /// Whether each piece of a request's code ran on the curl thread.
    final class Threads: Sendable {
        private let ranOnCurlThread = Locked<[String: Bool]>([:])

        func record(_ code: String) {
            let onCurlThread = CurlDriver.isCurrentThread
            ranOnCurlThread.withLock { $0[code] = onCurlThread }
        }

        var recorded: [String: Bool] { ranOnCurlThread.withLock { $0 } }
    }

    struct RecordingInterceptor: RequestInterceptor {
        let threads: Threads
        func validate(_ response: Response, for task: RequestTask) throws(ErrandError) {
            threads.record("interceptor")
        }
    }

    struct RecordingAccessory: RequestAccessory {
        let threads: Threads
        func requestWillStop(_ task: RequestTask) { threads.record("accessory") }
    }

    /// A GET whose response, with nothing but its status check to run, is delivered directly.
    struct Plain: BaseRequest {
        let threads: Threads
        var url: String { "/get?plain" }
        func statusCodeValidator(_ code: Int) -> Bool {
            threads.record("statusCodeValidator")
            return (200...299).contains(code)
        }
    }

    struct Intercepted: BaseRequest {
        let threads: Threads
        var url: String { "/get?intercepted" }
        var interceptors: [any RequestInterceptor] { [RecordingInterceptor(threads: threads)] }
        var requestAccessories: [any RequestAccessory] { [RecordingAccessory(threads: threads)] }
        func statusCodeValidator(_ code: Int) -> Bool {
            threads.record("statusCodeValidator")
            return (200...299).contains(code)
        }
    }

    @Test func aStatusCheckNeverRunsOnTheCurlThread() async throws {
        let fixture = try PipelineFixture()
        defer { fixture.server.stop() }
        let agent = fixture.makeAgent(transport: CurlTransport())
        let threads = Threads()
        for _ in 0..<20 {
            _ = try await agent.response(Plain(threads: threads))
            #expect(threads.recorded == ["statusCodeValidator": false])
        }
    }

    @Test func interceptorsAndAccessoriesNeverRunOnTheCurlThread() async throws {
        let fixture = try PipelineFixture()
        defer { fixture.server.stop() }
        let agent = fixture.makeAgent(transport: CurlTransport())
        let threads = Threads()
        for _ in 0..<20 {
            _ = try await agent.response(Intercepted(threads: threads))
            let recorded = threads.recorded
            #expect(recorded == ["accessory": false, "interceptor": false, "statusCodeValidator": false])
        }
    }
}
