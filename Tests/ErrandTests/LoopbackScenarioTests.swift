import ErrandScenarios
import ErrandTestServer
import Testing

/// One loopback server for the whole test process, on an ephemeral port.
let loopbackServer: TestServer? = try? TestServer()

@Suite("Integration scenarios against the loopback ErrandTestServer")
struct LoopbackScenarioTests {
    @Test(arguments: Scenario.all)
    func scenario(_ scenario: Scenario) async throws {
        let server = try #require(loopbackServer, "the loopback server did not start")
        try await scenario.run(baseURL: server.baseURL)
    }
}
