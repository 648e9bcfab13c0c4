import ErrandScenarios
import Foundation

@testable import Errand

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One test of this test binary, run in a child process: for what may end the process — a trap
/// inside FoundationNetworking — or hold up every URLSession in it, so that the suite outlives it
/// and can say what happened.
///
/// The child's test is disabled unless its environment variable is set, which only this does.
enum ChildTest {
    /// How the child ended: its exit status (-1 when a signal killed it) and everything it wrote
    /// to its output and its error.
    struct Ending: Sendable {
        let status: Int32
        let output: String

        /// The last lines of the output, for a failure message.
        var tail: String {
            output.split(separator: "\n", omittingEmptySubsequences: false).suffix(12).joined(separator: "\n")
        }

        /// The rest of the last line that starts with `marker`, which the child's test printed.
        func line(after marker: String) -> Substring? {
            output.split(separator: "\n").last { $0.hasPrefix(marker) }?.dropFirst(marker.count)
        }
    }

    /// Runs the test named `name` of this binary with `environment` added, on a thread of its own,
    /// and returns once the child has exited — killed after `timeLimit` seconds if it has not.
    static func run(_ name: String, environment: [String: String], timeLimit: TimeInterval = 120) async throws
        -> Ending
    {
        let executable = CommandLine.arguments.first ?? ""
        // No backtrace: a trap's own message is what a failure needs, and the backtracer takes
        // seconds on a busy machine.
        let environment = environment.merging(["SWIFT_BACKTRACE": "enable=no"]) { $1 }
        return try await onOwnThread {
            let child = try ChildProcess(
                executable, ["--testing-library", "swift-testing", "--filter", name], environment: environment,
                keepingStandardError: true)
            child.closeInput()
            // Set, under the lock the kill takes too, before the child is reaped: until then its
            // pid cannot be another process's.
            let reaping = Locked(false)
            DispatchQueue.global().asyncAfter(deadline: .now() + timeLimit) { [pid = child.pid] in
                reaping.withLock { if !$0 { _ = kill(pid, SIGKILL) } }
            }
            let output = String(decoding: child.readToEnd(), as: UTF8.self)
            reaping.withLock { $0 = true }
            return Ending(status: child.waitForExit(), output: output)
        }
    }
}
