import ErrandScenarios
import ErrandTestServer
import Foundation
import Testing

@testable import Errand

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A command-line tool that exits as soon as its last request returns still logs that request:
/// the debug log's line, and a monitor's that asks for it, are out before the caller hears.
@Suite("The last log line of a tool that exits at once")
struct LastLogLineTests {
    struct Get: BaseRequest {
        var url: String { "/get" }
    }

    /// Marks the child's part of the test and gives it the server's URL.
    static let childVariable = "ERRAND_LAST_LINE_BASE_URL"

    /// The child's part of ``aToolThatExitsRightAfterItsLastRequestStillLogsIt()``: the obvious
    /// code of a tool — the debug log on, one request — and an exit the moment it returns.
    @Test(.enabled(if: ProcessInfo.processInfo.environment[childVariable] != nil))
    func requestThenExit() async throws {
        let baseURL = try #require(ProcessInfo.processInfo.environment[Self.childVariable])
        _ = dup2(STDOUT_FILENO, STDERR_FILENO)  // The log writes to standard error; the parent reads standard output.
        let config = NetworkConfig()
        config.baseUrl = baseURL
        config.debugLogEnabled = true
        _ = try await NetworkAgent(config: config).response(Get())
        exit(0)
    }

    @Test func aToolThatExitsRightAfterItsLastRequestStillLogsIt() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let executable = try #require(CommandLine.arguments.first)
        let (status, output) = try await onOwnThread {
            let child = try ChildProcess(
                executable, ["--testing-library", "swift-testing", "--filter", "requestThenExit"],
                environment: [Self.childVariable: server.baseURL])
            child.closeInput()
            let output = String(decoding: child.readToEnd(), as: UTF8.self)
            return (child.waitForExit(), output)
        }
        #expect(status == 0, "\(output)")
        #expect(output.contains("[Errand] GET \(server.baseURL)/get → 200, "), "\(output)")
    }
}
