import Foundation

/// The long day: for half an hour (`--minutes`), one agent in one process holds 50 WebSockets
/// (some idle for minutes, some chatty, some compressed), 200 Server-Sent Event streams and a
/// steady mix of GETs, POSTs, cached requests and resumable downloads, all through a
/// ``FaultProxy`` on loopback, with reconnecting clients where an app would reconnect; then it
/// checks what must hold after such a day (see ``SoakRun``) and exits non-zero, naming the
/// invariants that broke, when one did.
///
/// This process only supervises: the soak runs in a child (``SoakRun``), so that a crash of the
/// process — a trap in FoundationNetworking, say — is reported with the time it happened, and
/// the child's own servers run in a grandchild (``SoakServer``), so that descriptors, threads
/// and memory are the client's alone.
enum SoakBenchmark {
    static let name = "soak"
    static let childArgument = "--soak-client"

    /// Runs the soak in a child process and returns the status to exit with: 0 when every
    /// invariant held, 1 when one broke, 2 when the soak could not run, 3 when it crashed.
    static func supervise(_ options: SoakOptions) -> Int32 {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        child.arguments = [childArgument] + options.arguments
        let began = Date()
        // What this process printed must come before the child's lines.
        fflush(nil)
        do {
            try child.run()
        } catch {
            print("soak: cannot start its process: \(error)")
            return 2
        }
        child.waitUntilExit()
        let seconds = Date().timeIntervalSince(began)
        switch (child.terminationReason, child.terminationStatus) {
        case (.exit, let status):
            return status
        case (.uncaughtSignal, let signal):
            print(
                """

                SOAK FAILED: the soak's process crashed (signal \(signal)) at t=\(String(format: "%.1f", seconds))s \
                under \(options.transport.rawValue); the lines above, and its standard error, say where.
                """)
            return 3
        @unknown default:
            return 3
        }
    }
}
