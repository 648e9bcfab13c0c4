import Errand
import ErrandScenarios
import ErrandTestServer
import Foundation
import Testing

@Suite("Maximum response size")
struct ResponseSizeTests {
    struct Big: BaseRequest {
        var url: String
        var maximumResponseSize: Int?
        var responseSerializerType: ResponseSerializerType { .data }
    }

    @Test func aDeclaredLengthOverTheLimitFailsAtTheHead() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let config = NetworkConfig()
        config.baseUrl = server.baseURL
        config.callbackQueue = DispatchQueue(label: "errand.tests.size")
        config.maximumResponseSize = 1 << 20
        let agent = NetworkAgent(config: config)
        let task = await agent.finishedTask(Big(url: "/download/\(1 << 30)"))
        #expect(task.error == .responseTooLarge(1 << 20))
        #expect(task.response == nil)
        // Under the limit, and a request's own limit over the config's.
        #expect(await agent.finishedTask(Big(url: "/download/1000")).error == nil)
        #expect(await agent.finishedTask(Big(url: "/download/2000000", maximumResponseSize: 4 << 20)).error == nil)
    }

    @Test func anUndeclaredBodyFailsOnceItPassesTheLimitAndStopsTheTransfer() async throws {
        let transport = ManualTransport()
        let agent = NetworkAgent.testing(transport)
        let task = agent.start(Big(url: "/endless", maximumResponseSize: 100_000))
        guard let sent = await transport.sent(count: 1)?.first else {
            Issue.record("nothing was sent")
            return
        }
        sent.events(.responseHead(statusCode: 200, headers: [:]))
        let chunk = Data(count: 16_384)
        for _ in 0..<7 { sent.events(.body(chunk)) }  // 114,688 bytes: past the limit
        await #expect(throws: ErrandError.responseTooLarge(100_000)) { try await task.value }
        #expect(sent.cancelled)
    }
}
