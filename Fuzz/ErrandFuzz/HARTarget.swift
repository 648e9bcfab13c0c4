import Errand
import Foundation

/// HTTP Archives read for replay, as other tools write them or as they are edited by hand: reading
/// one must fail with an error or succeed, and every recorded request must then be answered before
/// `send` returns — recorded redirects followed, loops included — comparing bodies or not.
enum HARTarget {
    /// One file per process, rewritten for each input: the replay reads a file.
    private static let file = FileManager.default.temporaryDirectory
        .appendingPathComponent("errand-fuzz-\(getpid()).har")

    static func run(_ data: Data) {
        var input = FuzzInput(data)
        let matching: ReplayMatching = input.bool() ? .methodURLAndBody : .methodAndURL
        let har = Data(input.rest())
        // Foundation's Data(contentsOf:) leaks a 4 KiB buffer reading an empty file; not Errand's to fix.
        guard !har.isEmpty else { return }
        guard (try? har.write(to: file)) != nil else { fatalError("cannot write \(file.path)") }
        let transport: ReplayTransport
        do {
            transport = try ReplayTransport(har: file, matching: matching)
        } catch {
            guard case .decoding = error else { fatalError("unexpected error \(error)") }
            return
        }
        // JSONDecoder, which the replay reads with, is laxer than JSONSerialization: it takes invalid
        // UTF-8 inside a string (as U+FFFD) and raw control characters. Such a file's requests are
        // not sent here.
        guard let root = try? JSONSerialization.jsonObject(with: har) as? [String: Any],
            let log = root["log"] as? [String: Any], let entries = log["entries"] as? [[String: Any]]
        else { return }
        for entry in entries.prefix(16) {
            guard let request = entry["request"] as? [String: Any], let text = request["url"] as? String,
                let url = URL(string: text), let method = request["method"] as? String
            else { continue }
            let body = ((request["postData"] as? [String: Any])?["text"] as? String).map { Data($0.utf8) }
            let completed = Completion()
            _ = transport.send(TransportRequest(url: url, method: method, body: body)) { event in
                if case .completed = event { completed.mark() }
            }
            require(completed.isMarked, "\(method) \(text) was not answered before send returned")
        }
    }

    private final class Completion: @unchecked Sendable {  // `marked` is read and written under `lock`
        private let lock = NSLock()
        private var marked = false

        func mark() { lock.withLock { marked = true } }
        var isMarked: Bool { lock.withLock { marked } }
    }
}
