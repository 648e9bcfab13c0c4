import Dispatch
import Foundation

/// The one line a finished request logs when ``NetworkConfig/debugLogEnabled`` is on.
enum DebugLog {
    /// `[Errand] GET http://host/path?token=<redacted> → 200, 12.3 ms, 512 bytes`, then the
    /// task's notes (`; credential withheld: …`).
    static func line(for task: RequestTask, end: DispatchTime = .now()) -> String {
        ([outcomeLine(for: task, end: end)] + task.debugNotes.map(oneLine)).joined(separator: "; ")
    }

    private static func outcomeLine(for task: RequestTask, end: DispatchTime) -> String {
        let milliseconds = Double(end.uptimeNanoseconds &- task.startTime.uptimeNanoseconds) / 1_000_000
        let duration = String(format: "%.1f ms", milliseconds)
        guard let request = task.transportRequest else {
            if let response = task.response, response.isDataFromCache {
                return
                    "[Errand] \(type(of: task.request)) → \(response.statusCode) from the cache, \(duration), \(response.data.count) bytes"
            }
            return
                "[Errand] \(type(of: task.request)) not sent: \(oneLine(task.error.map(describe) ?? "unknown")) (\(duration))"
        }
        let target = "\(request.method) \(Redactor.url(request.url))"
        let status = task.response.map { "\($0.statusCode)" } ?? "no response"
        let outcome = task.error.map { ", failed: \(oneLine(describe($0)))\(waitNote(task))" } ?? ""
        return "[Errand] \(target) → \(status)\(outcome), \(duration), \(bytes(of: task)) bytes"
    }

    /// Why a request that timed out was never sent, when its transport knows.
    private static func waitNote(_ task: RequestTask) -> String {
        guard task.error == .timedOut, let limit = task.metrics?.exhaustedConnectionLimit else { return "" }
        return
            " (never sent: more requests to the host were in flight than its \(limit) connections, "
            + "ConnectionOptions.maximumConnectionsPerHost)"
    }

    /// The body's length; for a download, the length of its file, and for a stream what its
    /// consumer was handed: where the body went.
    private static func bytes(of task: RequestTask) -> Int {
        if let stream = task.stream, stream.isStreaming { return stream.streamedBytes }
        guard let response = task.response else { return 0 }
        guard let file = response.fileURL else { return response.data.count }
        let size = try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber
        return size?.intValue ?? 0
    }

    /// `error`'s description with the URLs it names masked: a transport error quotes the URL
    /// that failed, query and all.
    private static func describe(_ error: ErrandError) -> String {
        Redaction.credentials.text(error.description)
    }

    /// `text` with its line breaks as spaces: an error quoting a multi-line body keeps the log at
    /// one line per request.
    private static func oneLine(_ text: String) -> String {
        guard text.containsLineBreak else { return text }
        return text.split(whereSeparator: \.isNewline).joined(separator: " ")
    }

    static func write(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
