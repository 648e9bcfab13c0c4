import Errand
import Foundation

/// A request whose every knob is a stored property, so a scenario states only what it varies.
public struct HTTPBinRequest: BaseRequest {
    public var url: String
    public var method: HTTPMethod = .get
    public var arguments: [String: any Sendable]?
    public var requestSerializerType: RequestSerializerType = .http
    public var responseSerializerType: ResponseSerializerType = .json
    public var headers: [String: String] = [:]
    public var authorization: (username: String, password: String)?
    public var timeoutInterval: TimeInterval = 30
    public var jsonValidator: JSONValidator?
    public var acceptedStatusCodes: Set<Int>?
    public var resumableDownloadPath: String?
    public var resumableDownloadProgress: (@Sendable (TransferProgress) -> Void)?
    public var constructingBody: (@Sendable (inout MultipartFormData) -> Void)?
    public var uploadBody: UploadBody?
    public var uploadProgress: (@Sendable (TransferProgress) -> Void)?

    public init(_ url: String, method: HTTPMethod = .get, arguments: [String: any Sendable]? = nil) {
        self.url = url
        self.method = method
        self.arguments = arguments
    }

    public func statusCodeValidator(_ code: Int) -> Bool {
        acceptedStatusCodes.map { $0.contains(code) } ?? (200...299).contains(code)
    }
}

extension NetworkAgent {
    /// Starts `request` with closures and waits for whichever one runs.
    public func finishedTask(_ request: any BaseRequest, tag: Int = 0) async -> RequestTask {
        await withCheckedContinuation { continuation in
            let task = start(
                request, success: { continuation.resume(returning: $0) },
                failure: { continuation.resume(returning: $0) })
            task.tag = tag
        }
    }
}

extension Response {
    /// The body as a JSON object, or an empty one.
    public var object: [String: Any] { jsonObject as? [String: Any] ?? [:] }
}
