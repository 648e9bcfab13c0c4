// Transfers: a download that is interrupted and resumed, and a file upload, with progress bars.
//
//     swift run Transfers                            # against the embedded loopback server
//     swift run Transfers --base-url http://host:80  # against any httpbin-compatible server
//
// The download is cancelled part way, as if the app quit; a new agent, as after a relaunch,
// starts it again and only the rest is fetched (HTTP 206). Then a file is uploaded from disk.

import Errand
import ErrandTestServer
import Foundation

/// A file download. With `resumableDownloadPath` the body streams to disk and resumes.
struct FileDownloadApi: BaseRequest {
    let path: String
    let destination: String
    let onProgress: @Sendable (TransferProgress) -> Void

    var url: String { path }
    var responseSerializerType: ResponseSerializerType { .data }
    var resumableDownloadPath: String? { destination }
    var resumableDownloadProgress: (@Sendable (TransferProgress) -> Void)? { onProgress }
}

/// A file upload, streamed from disk.
struct FileUploadApi: BaseRequest {
    let file: URL
    let onProgress: @Sendable (TransferProgress) -> Void

    var url: String { "/anything/upload" }
    var method: HTTPMethod { .put }
    var uploadBody: UploadBody? { .file(file) }
    var uploadProgress: (@Sendable (TransferProgress) -> Void)? { onProgress }
}

@main
enum Transfers {
    static func main() async {
        do {
            try await run(arguments: Array(CommandLine.arguments.dropFirst()))
        } catch {
            print("\nTransfers failed: \(error)")
            exit(1)
        }
    }

    static func run(arguments: [String]) async throws {
        let config = NetworkConfig.shared
        config.callbackQueue = DispatchQueue(label: "Transfers.callbacks")  // no main run loop here
        let server = try ExampleServer(arguments: arguments)
        config.baseUrl = server.baseURL
        defer { server.stop() }
        let resource =
            server.embedded == nil
            ? "/range/102400?duration=2&chunk_size=2048"  // httpbin's largest, over 2 s
            : "/download/\(48 << 20)?rate=\(24 << 20)"  // 48 MiB over 2 s
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("Transfers-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("download.bin").path

        print("Downloading \(config.baseUrl)\(resource), cancelled at 40% as if the app quit:")
        let bar = ProgressBar()
        let cancelAt40 = Shared<RequestTask?>(nil)
        let first = NetworkAgent.shared.start(
            FileDownloadApi(path: resource, destination: destination) { progress in
                bar.show(progress)
                if (progress.fractionCompleted ?? 0) >= 0.4 { cancelAt40.value?.cancel() }
            })
        cancelAt40.value = first
        _ = try? await first.value
        bar.end(first.error.map { "stopped: \($0)" } ?? "finished before the cancel")
        let kept = (try? FileManager.default.attributesOfItem(atPath: destination + ".errand-partial")[.size]) ?? 0
        print("  \(kept) bytes kept in download.bin.errand-partial.\n")

        print("Relaunched: a new agent starts the same download and resumes it:")
        let relaunched = NetworkAgent(config: config)
        let resumedBar = ProgressBar()
        let response = try await relaunched.response(
            FileDownloadApi(path: resource, destination: destination) { resumedBar.show($0) })
        resumedBar.end("HTTP \(response.statusCode)\(response.statusCode == 206 ? ", only the rest was sent" : "")")
        let size = (try FileManager.default.attributesOfItem(atPath: destination)[.size] as? NSNumber)?.intValue ?? 0
        print("  \(response.fileURL?.lastPathComponent ?? "?") is complete: \(size) bytes.\n")

        print("Uploading a 4 MiB file from disk:")
        let upload = folder.appendingPathComponent("upload.bin")
        try Data(repeating: 0x2A, count: 4 << 20).write(to: upload)
        let uploadBar = ProgressBar()
        let echoed = try await FileUploadApi(file: upload) { uploadBar.show($0) }.response()
        uploadBar.end("HTTP \(echoed.statusCode)")
    }
}

/// One line redrawn in place: `[##########----------]  50%  24.0 / 48.0 MiB`.
final class ProgressBar: Sendable {
    private let lastDrawn = Shared<Int>(-1)

    func show(_ progress: TransferProgress) {
        let fraction = progress.fractionCompleted ?? 0
        let percent = Int(fraction * 100)
        guard lastDrawn.exchange(percent) != percent else { return }
        let filled = Int(fraction * 30)
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: 30 - filled)
        let unit: (name: String, size: Double) =
            (progress.totalBytes ?? 0) < 1 << 20 ? ("KiB", 1024) : ("MiB", 1_048_576)
        let done = String(format: "%.1f", Double(progress.completedBytes) / unit.size)
        let total = progress.totalBytes.map { String(format: "%.1f", Double($0) / unit.size) } ?? "?"
        print("\r  [\(bar)] \(String(format: "%3d", percent))%  \(done) / \(total) \(unit.name)", terminator: "")
        fflush(nil)  // every stream: the line has no newline to flush it
    }

    func end(_ note: String) {
        print("  \(note)")
    }
}

/// A value shared between the progress closures and the code that starts the transfers.
final class Shared<Value: Sendable>: @unchecked Sendable {  // Sendable because `lock` guards `stored`.
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) {
        stored = value
    }

    var value: Value {
        get {
            lock.lock()
            defer { lock.unlock() }
            return stored
        }
        set {
            lock.lock()
            stored = newValue
            lock.unlock()
        }
    }

    /// Stores `newValue` and returns the previous value.
    func exchange(_ newValue: Value) -> Value {
        lock.lock()
        defer { lock.unlock() }
        let old = stored
        stored = newValue
        return old
    }
}
