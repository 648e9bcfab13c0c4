import ErrandScenarios
import Foundation
import Testing

/// The httpbin these tests run against, e.g. `http://127.0.0.1:8080`; `.ci/run` starts one.
private let httpbinURL = ProcessInfo.processInfo.environment["ERRAND_HTTPBIN_URL"].flatMap { $0.isEmpty ? nil : $0 }

@Suite("Integration scenarios against a real httpbin (ERRAND_HTTPBIN_URL)")
struct HTTPBinInteropTests {
    @Test(
        .enabled(if: httpbinURL != nil, "ERRAND_HTTPBIN_URL is not set: the httpbin interop suite is skipped"),
        arguments: Scenario.all)
    func scenario(_ scenario: Scenario) async throws {
        let baseURL = try #require(httpbinURL)
        try await scenario.run(baseURL: baseURL)
    }

    @Test(
        "interop suite is not silently skipped in CI", .enabled(if: ProcessInfo.processInfo.environment["CI"] == "true")
    )
    func httpbinIsConfiguredInCI() {
        #expect(httpbinURL != nil, "CI must run the interop suite: set ERRAND_HTTPBIN_URL")
    }
}
