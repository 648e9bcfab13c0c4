import Errand
import ErrandTestServer
import Foundation

/// What a 100 MiB upload sends again after its connection drops at half: resumed by
/// `resumableUploadPath` (the draft's `HEAD` then `PATCH` of the rest), against the same upload
/// without resumption, which an app can only start again whole. The bytes are counted as the
/// transport hands them to the connection, below Errand's own progress; the server, in a process
/// of its own, checks every byte of the result.
enum ResumedUploadBenchmark {
    static let size: Int64 = 100 << 20
    static let dropAt: Int64 = 50 << 20

    /// Each run through each transport.
    static let names = ["curl", "urlsession"].flatMap {
        ["transfer.resumed-upload-100mib.\($0)", "transfer.restarted-upload-100mib.\($0)"]
    }

    struct Row {
        let name: String
        /// Bytes the transport sent, over every request of the upload.
        let sent: Int64
        let requests: Int
        let seconds: Double
    }

    static func run(_ plan: Plan, progress: (String) -> Void) async throws -> [Row] {
        let selected = names.filter(plan.includes)
        guard !selected.isEmpty else { return [] }
        let server = try ServerProcess()
        defer { server.stop() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("errand-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("upload.bin")
        let checksum = try writeFile(file)
        var rows: [Row] = []
        for name in selected {
            progress(name)
            rows.append(try await measure(name, file: file, checksum: checksum, server: server, folder: folder))
        }
        return rows
    }

    private static func measure(
        _ name: String, file: URL, checksum: String, server: ServerProcess, folder: URL
    ) async throws -> Row {
        let config = NetworkConfig()
        config.baseUrl = server.baseURL
        config.cacheDirectory = folder.appendingPathComponent("cache-\(UUID().uuidString)")
        config.callbackQueue = DispatchQueue(label: "ErrandBenchmarks.resumed-upload.callbacks")
        let inner: any Transport =
            name.hasSuffix(".urlsession")
            ? URLSessionTransport(configuration: config.sessionConfiguration) : CurlTransport()
        let counting = SentBytes(inner)
        let agent = NetworkAgent(config: config, transport: counting)
        let started = ContinuousClock.now
        let response: Response
        if name.hasPrefix("transfer.resumed-upload") {
            response = try await agent.response(
                Upload(path: "/resumable/bench-\(UUID())?drop_at=\(dropAt)", file: file))
        } else {
            // Without resumption the drop fails the upload, and the app starts it again, whole.
            let failed = try? await agent.response(
                Upload(path: "/resumable/bench-\(UUID())?drop_at=\(dropAt)&no_104=1", file: file, resumes: false))
            guard failed == nil else { throw BenchmarkError(description: "\(name): the drop did not happen") }
            response = try await agent.response(Upload(path: "/resumable/bench-\(UUID())", file: file, resumes: false))
        }
        let elapsed = (ContinuousClock.now - started).components
        let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
        let answer = response.jsonObject as? [String: Any]
        guard (answer?["size"] as? NSNumber)?.int64Value == size, answer?["checksum"] as? String == checksum else {
            throw BenchmarkError(description: "\(name): the server holds another body: \(answer ?? [:])")
        }
        return Row(name: name, sent: counting.total, requests: counting.requests, seconds: seconds)
    }

    static func table(_ rows: [Row]) -> String {
        Format.table(
            header: ["benchmark", "sent", "sent again", "requests", "time"],
            rows: rows.map { row in
                [
                    row.name, mebibytes(row.sent), mebibytes(row.sent - size), String(row.requests),
                    String(format: "%.2f s", row.seconds),
                ]
            })
            + "\n  (a \(size >> 20) MiB file, its connection dropped by the server at \(dropAt >> 20) MiB)"
    }

    private static func mebibytes(_ bytes: Int64) -> String {
        String(format: "%.2f MiB", Double(bytes) / 1_048_576)
    }

    /// Writes the file and returns the server's checksum of it.
    private static func writeFile(_ url: URL) throws -> String {
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw BenchmarkError(description: "cannot create \(url.path)")
        }
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        let chunk = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        var checksum = Checksum()
        for _ in 0..<(size / Int64(chunk.count)) {
            try handle.write(contentsOf: chunk)
            checksum.update(chunk)
        }
        return checksum.hexDigits
    }
}

/// The upload: the file, resumable unless `resumes` is `false`.
private struct Upload: BaseRequest {
    let path: String
    let file: URL
    var resumes = true
    var url: String { path }
    var method: HTTPMethod { .post }
    var timeoutInterval: TimeInterval { 120 }
    var uploadBody: UploadBody? { resumes ? nil : .file(file) }
    /// Without resumption, the field still makes the server's fault apply, as to a client that
    /// offers resumption it cannot take up.
    var headers: [String: String] { resumes ? [:] : ["Upload-Complete": "?1"] }
    var resumableUploadPath: String? { resumes ? file.path : nil }
}

/// Counts the request body bytes a transport sends: per request the last upload progress it
/// reported, summed over the requests.
private final class SentBytes: Transport, @unchecked Sendable {  // `counts` is read and written only while holding `lock`
    private let inner: any Transport
    private let lock = NSLock()
    private var counts: [Int64] = []

    init(_ inner: any Transport) {
        self.inner = inner
    }

    var total: Int64 { lock.withLock { counts.reduce(0, +) } }
    var requests: Int { lock.withLock { counts.count } }

    func send(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void) -> any TransportTask {
        let index = lock.withLock {
            counts.append(0)
            return counts.count - 1
        }
        return inner.send(request) { [self] event in
            if case .uploadProgress(let sent, _) = event { lock.withLock { counts[index] = max(counts[index], sent) } }
            events(event)
        }
    }
}
