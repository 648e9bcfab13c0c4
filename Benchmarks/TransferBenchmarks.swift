import Errand
import ErrandTestServer
import Foundation

/// Peak resident memory while a 1 GiB download streams to disk and a 256 MiB file uploads from
/// disk: it must stay bounded, whatever the size. The embedded server runs in a child process,
/// so only the client's memory is counted, as it would be against a real server.
enum TransferBenchmarks {
    // The upload runs first: memory the download frees stays resident and would count against it.
    static let names = ["transfer.upload-256mib", "transfer.download-1gib"]

    /// One transfer: its size, how long it took, and the resident memory it peaked at.
    struct Result: Sendable {
        let name: String
        let bytes: Int
        let seconds: Double
        /// `VmHWM` after it was reset just before the transfer, in kibibytes; `nil` without `/proc`.
        let peakResidentKiB: Int?
        let residentBeforeKiB: Int?
    }

    static func run(_ plan: Plan, progress: (String) -> Void) async throws -> [Result] {
        guard names.contains(where: plan.includes) else { return [] }
        let server = try ServerProcess()
        defer { server.stop() }
        let config = NetworkConfig()
        config.baseUrl = server.baseURL
        config.callbackQueue = DispatchQueue(label: "ErrandBenchmarks.transfer.callbacks")
        let agent = NetworkAgent(config: config)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("errand-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }

        var results: [Result] = []
        if plan.includes(names[0]) {
            progress(names[0])
            let size = 256 << 20
            let file = folder.appendingPathComponent("upload.bin")
            try writeFile(file, size: size)
            results.append(
                try await measure(names[0], bytes: size) {
                    let response = try await agent.response(UploadBenchmarkRequest(file: file))
                    guard (response.jsonObject as? [String: Any])?["bytes"] as? Int == size else {
                        throw BenchmarkError(description: "the server did not receive \(size) bytes")
                    }
                })
        }
        if plan.includes(names[1]) {
            progress(names[1])
            let size = 1 << 30
            let target = folder.appendingPathComponent("download.bin").path
            results.append(
                try await measure(names[1], bytes: size) {
                    let response = try await agent.response(DownloadBenchmarkRequest(size: size, target: target))
                    guard response.fileURL != nil, fileSize(target) == size else {
                        throw BenchmarkError(description: "the download did not produce a \(size)-byte file")
                    }
                    try FileManager.default.removeItem(atPath: target)
                })
        }
        return results
    }

    private static func measure(_ name: String, bytes: Int, _ transfer: () async throws -> Void) async throws -> Result
    {
        PeakMemory.resetHighWaterMark()
        let before = PeakMemory.resident()
        let clock = ContinuousClock()
        let start = clock.now
        try await transfer()
        let elapsed = clock.now - start
        return Result(
            name: name, bytes: bytes, seconds: elapsed.nanoseconds / 1e9,
            peakResidentKiB: PeakMemory.residentHighWaterMark(), residentBeforeKiB: before)
    }

    private static func writeFile(_ url: URL, size: Int) throws {
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw BenchmarkError(description: "cannot create \(url.path)")
        }
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        let chunk = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        for _ in 0..<(size / chunk.count) {
            try handle.write(contentsOf: chunk)
        }
    }

    private static func fileSize(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue
    }
}

/// A GET of `/download/{size}` into `target`.
private struct DownloadBenchmarkRequest: BaseRequest {
    let size: Int
    let target: String
    var url: String { "/download/\(size)" }
    var responseSerializerType: ResponseSerializerType { .data }
    var resumableDownloadPath: String? { target }
    var timeoutInterval: TimeInterval { 30 }
}

/// A PUT of a file to `/upload`, which counts the bytes without keeping them.
private struct UploadBenchmarkRequest: BaseRequest {
    let file: URL
    var url: String { "/upload" }
    var method: HTTPMethod { .put }
    var uploadBody: UploadBody? { .file(file) }
    var timeoutInterval: TimeInterval { 30 }
}
