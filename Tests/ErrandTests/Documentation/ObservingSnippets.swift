// swift-format-ignore-file
// (These snippets are the documents' code, line for line: formatted, they would part from it.)
import Errand
import Foundation

/// A logger, as the article's monitor takes one for granted.
private struct Logger: Sendable { func warning(_ message: String) {} }
private let logger = Logger()

/// The code the article "Observing and replaying requests" shows, compiled (DocumentedCodeTests
/// checks each snippet is the article's).
enum ObservingSnippets {
    // snippet: ObservingAndReplaying.md
    struct SlowRequestLog: EventMonitor {
        func request(_ task: RequestTask, didFinish result: Result<Response, ErrandError>) {
            guard let total = task.metrics?.total, total > 1 else { return }
            logger.warning("\(task.sentRequest?.url.absoluteString ?? "?") took \(total) s")
        }
    }
    // end snippet

    static func monitors() throws {
        // snippet: ObservingAndReplaying.md
        NetworkConfig.shared.addEventMonitor(SlowRequestLog())
        // end snippet
        // snippet: ObservingAndReplaying.md
        let recorder = HARRecorder(redaction: .default.adding(queryItems: ["api_key"], jsonFields: ["password"]))
        NetworkConfig.shared.addEventMonitor(recorder)
        // … use the app …
        try recorder.write(to: URL(fileURLWithPath: "session.har"))

        // Bodies up to 64 KiB, the newest 100 entries:
        let small = HARRecorder(redaction: .default, maximumBodySize: 64 * 1024, maximumEntries: 100)
        // end snippet
        _ = small
    }

    static func replaying(config: NetworkConfig) throws {
        // snippet: ObservingAndReplaying.md
        let replay = try ReplayTransport(har: URL(fileURLWithPath: "session.har"))
        let agent = NetworkAgent(config: config, transport: replay)

        // Every parameter: bodies compared, and a request the file lacks sent for real and recorded.
        let session = URL(fileURLWithPath: "session.har")
        let recording = try ReplayTransport(
            har: session, matching: .methodURLAndBody, onMissing: .record(via: CurlTransport(), into: session))
        // Or a request the file lacks sent through another transport, unrecorded:
        let mixed = try ReplayTransport(har: session, onMissing: .passThrough(CurlTransport()))
        // end snippet
        _ = (agent, recording, mixed)
    }
}
