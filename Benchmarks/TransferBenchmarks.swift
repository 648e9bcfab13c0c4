import Errand
import ErrandTestServer
import Foundation

/// Peak resident memory while a 1 GiB download streams to disk and a 256 MiB file uploads from
/// disk: it must stay bounded, whatever the size. Each transfer runs in a fresh process of its own,
/// and the embedded server in another, so only the client's memory is counted, as it would be
/// against a real server.
enum TransferBenchmarks {
    /// Each transfer through each transport: `curl` is ``CurlTransport``, `urlsession` ``URLSessionTransport``.
    static let names = ["curl", "urlsession"].flatMap {
        ["transfer.upload-256mib.\($0)", "transfer.download-1gib.\($0)"]
    }

    /// Runs each selected transfer in a fresh child process: memory that earlier benchmarks left
    /// resident would otherwise count against it.
    static func run(_ plan: Plan, progress: (String) -> Void) async throws -> [FreshProcess.Result] {
        var results: [FreshProcess.Result] = []
        for name in names where plan.includes(name) {
            progress(name)
            results.append(try FreshProcess.measure(name))
        }
        return results
    }

    /// The child process's side of ``run(_:progress:)``: one transfer, measured here.
    static func measureInThisProcess(_ name: String) async throws -> FreshProcess.Result {
        let server = try ServerProcess()
        defer { server.stop() }
        let config = NetworkConfig()
        config.baseUrl = server.baseURL
        config.callbackQueue = DispatchQueue(label: "ErrandBenchmarks.transfer.callbacks")
        let transport: any Transport =
            name.hasSuffix(".urlsession")
            ? URLSessionTransport(configuration: config.sessionConfiguration) : CurlTransport()
        let agent = NetworkAgent(config: config, transport: transport)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("errand-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }

        if name.hasPrefix("transfer.upload-256mib") {
            let size = 256 << 20
            let file = folder.appendingPathComponent("upload.bin")
            try writeFile(file, size: size)
            return try await FreshProcess.measurePeak(name, bytes: size) {
                let response = try await agent.response(UploadBenchmarkRequest(file: file))
                guard (response.jsonObject as? [String: Any])?["bytes"] as? Int == size else {
                    throw BenchmarkError(description: "the server did not receive \(size) bytes")
                }
            }
        }
        let size = 1 << 30
        let target = folder.appendingPathComponent("download.bin").path
        return try await FreshProcess.measurePeak(name, bytes: size) {
            let response = try await agent.response(DownloadBenchmarkRequest(size: size, target: target))
            guard response.fileURL != nil, fileSize(target) == size else {
                throw BenchmarkError(description: "the download did not produce a \(size)-byte file")
            }
        }
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
