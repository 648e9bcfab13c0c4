import Errand
import ErrandScenarios
import ErrandTestServer
import Foundation
import Testing

/// A GET whose download knobs are stored properties.
struct DownloadRequest: BaseRequest {
    var url: String
    var resumableDownloadPath: String?
    var resumableDownloadProgress: (@Sendable (TransferProgress) -> Void)?
    var timeoutIntervalForResource: TimeInterval?
    var responseSerializerType: ResponseSerializerType { .data }
}

/// A POST or PUT whose upload knobs are stored properties.
struct UploadRequest: BaseRequest {
    var url: String
    var method: HTTPMethod = .post
    var arguments: [String: any Sendable]?
    var headers: [String: String] = [:]
    var uploadBody: UploadBody?
    var constructingBody: (@Sendable (inout MultipartFormData) -> Void)?
    var uploadProgress: (@Sendable (TransferProgress) -> Void)?
}

/// A server, an agent and a scratch directory of their own.
struct TransferFixture {
    let server: TestServer
    let directory: URL

    init() throws {
        server = try TestServer()
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("errand-transfer-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// A new agent, as a relaunched app would have.
    func makeAgent() -> NetworkAgent {
        let config = NetworkConfig()
        config.baseUrl = server.baseURL
        config.callbackQueue = DispatchQueue(label: "errand.transfer-tests.callbacks")
        return NetworkAgent(config: config)
    }

    /// Returns once `agent`'s callback queue has run what was queued on it so far, such as the
    /// progress calls of a request whose `async` caller has its response already: those two are
    /// not ordered.
    static func callbacksDelivered(on agent: NetworkAgent) async {
        await withCheckedContinuation { continuation in agent.config.callbackQueue.async { continuation.resume() } }
    }

    func path(_ name: String) -> String {
        directory.appendingPathComponent(name).path
    }

    func removeDirectory() {
        try? FileManager.default.removeItem(at: directory)
        server.stop()
    }

    /// Whether the file at `path` holds exactly what `/download/{size}` serves at `version`,
    /// compared by checksum on a thread of its own.
    static func file(_ path: String, matchesDownloadOf size: Int, version: Int) async throws -> Bool {
        try await onOwnThread { try checksum(ofFile: path) == expectedChecksum(size: size, version: version) }
    }

    /// The checksum of the bytes `/download/{size}` serves at `version`, computed chunk by chunk.
    static func expectedChecksum(size: Int, version: Int) -> UInt64 {
        var checksum = Checksum()
        var start = 0
        while start < size {
            let end = min(size, start + (4 << 20))
            checksum.update(TestServer.downloadContent(size: size, version: version, range: start..<end))
            start = end
        }
        return checksum.value
    }

    /// The checksum of a file, read chunk by chunk.
    static func checksum(ofFile path: String) throws -> UInt64 {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw CocoaError(.fileReadNoSuchFile) }
        defer { try? handle.close() }
        var checksum = Checksum()
        while let chunk = try handle.read(upToCount: 4 << 20), !chunk.isEmpty {
            checksum.update(chunk)
        }
        return checksum.value
    }

    static func fileSize(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue
    }
}
