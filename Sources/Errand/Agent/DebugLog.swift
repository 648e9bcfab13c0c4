import Dispatch
import Foundation

/// The one line a finished request logs when ``NetworkConfig/debugLogEnabled`` is on.
enum DebugLog {
    /// `[Errand] GET http://host/path?token=<redacted> → 200, 12.3 ms, 512 bytes`
    static func line(for task: RequestTask, end: DispatchTime = .now()) -> String {
        let milliseconds = Double(end.uptimeNanoseconds &- task.startTime.uptimeNanoseconds) / 1_000_000
        let duration = String(format: "%.1f ms", milliseconds)
        guard let request = task.transportRequest else {
            if let response = task.response, response.isDataFromCache {
                return
                    "[Errand] \(type(of: task.request)) → \(response.statusCode) from the cache, \(duration), \(response.data.count) bytes"
            }
            return
                "[Errand] \(type(of: task.request)) not sent: \(task.error.map(String.init(describing:)) ?? "unknown") (\(duration))"
        }
        let target = "\(request.method) \(Redactor.url(request.url))"
        let bytes = task.response?.data.count ?? 0
        let status = task.response.map { "\($0.statusCode)" } ?? "no response"
        let outcome = task.error.map { ", failed: \($0)" } ?? ""
        return "[Errand] \(target) → \(status)\(outcome), \(duration), \(bytes) bytes"
    }

    static func write(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
