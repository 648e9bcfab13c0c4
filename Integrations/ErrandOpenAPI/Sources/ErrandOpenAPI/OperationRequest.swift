import Errand
import Foundation
import HTTPTypes

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One generated operation's HTTP request, as an Errand request: an absolute URL, the method and
/// header fields as given, and the body.
struct OperationRequest: BaseRequest {
    /// What the transport learns of the request while it runs: its task, and why a streamed body
    /// stopped.
    final class Operation: RequestAccessory, @unchecked Sendable {  // `lock` guards the two vars.
        let id: String
        private let lock = NSLock()
        private var startedTask: RequestTask?
        private var failure: (any Error)?

        init(id: String) {
            self.id = id
        }

        /// The task running the request, once it started.
        var task: RequestTask? { lock.withLock { startedTask } }

        /// The error a streamed request body threw, which ended the request.
        var bodyError: (any Error)? { lock.withLock { failure } }

        func requestWillStart(_ task: RequestTask) {
            task.userInfo[ErrandClientTransport.operationIDKey] = id
            lock.withLock { startedTask = task }
        }

        /// Ends the request because its body failed with `error`.
        func bodyFailed(_ error: any Error) {
            let task = lock.withLock {
                failure = failure ?? error
                return startedTask
            }
            task?.cancel()
        }
    }

    let url: String
    let method: HTTPMethod
    let headers: [String: String]
    let uploadBody: UploadBody?
    let operation: Operation
    /// Set, so that a refused status's body is kept whole up to it, for the generated code to
    /// decode: the configuration's limit, what the app asked for.
    let maximumResponseSize: Int?
    /// The request as a `URLRequest`, for a method ``HTTPMethod`` lacks or a body it would not send.
    private let customRequest: URLRequest?

    var responseSerializerType: ResponseSerializerType { .data }
    var requestAccessories: [any RequestAccessory] { [operation] }
    /// Each call gets its own response body.
    var coalescesDuplicates: Bool { false }

    /// Statuses from 400 reach the interceptors as errors, to retry or refresh on; the transport
    /// hands the last one's response to the generated code.
    func statusCodeValidator(_ code: Int) -> Bool { code < 400 }

    func buildCustomURLRequest() -> URLRequest? { customRequest }

    /// Sends `request` to the server at `baseURL`, a refused status's body kept up to
    /// `maximumResponseSize` bytes.
    /// - Throws: ``ErrandError/invalidURL(_:)`` for a path that does not make a URL with the base;
    ///   ``ErrandError/serialization(_:)`` for a method Errand cannot send.
    init(
        _ request: HTTPRequest, uploadBody: UploadBody?, baseURL: URL, operation: Operation, maximumResponseSize: Int
    ) throws {
        let url = try Self.url(of: request, baseURL: baseURL)
        self.url = url.absoluteString
        self.headers = Self.headers(of: request.headerFields)
        self.operation = operation
        self.maximumResponseSize = maximumResponseSize
        let known = HTTPMethod(rawValue: request.method.rawValue)
        if let known, uploadBody == nil || !Self.dropsBody(known) {
            method = known
            self.uploadBody = uploadBody
            customRequest = nil
            return
        }
        guard request.method != .connect else {
            throw ErrandError.serialization("Errand cannot send CONNECT: it opens a tunnel, not a request")
        }
        if case .stream = uploadBody {
            throw ErrandError.serialization(
                "Errand cannot stream a body with \(request.method.rawValue): send it from memory "
                    + "(a body the runtime can iterate again, up to \(ErrandClientTransport.bufferedBodyLimit) bytes)")
        }
        // A method of its own (`QUERY`, `PROPFIND`), or a body on a method whose arguments Errand
        // puts in the query: sent as it is, from memory.
        method = known ?? .get
        self.uploadBody = nil
        var custom = URLRequest(url: url)
        custom.httpMethod = request.method.rawValue
        for (name, value) in headers { custom.setValue(value, forHTTPHeaderField: name) }
        if case .data(let data) = uploadBody { custom.httpBody = data }
        customRequest = custom
    }

    /// Whether Errand sends `arguments` of `method` in the query, and so no body.
    private static func dropsBody(_ method: HTTPMethod) -> Bool {
        [.get, .head, .delete, .options, .trace].contains(method)
    }

    /// The base URL's path followed by the request's path, and the request's query.
    private static func url(of request: HTTPRequest, baseURL: URL) throws(ErrandError) -> URL {
        let path = request.path ?? ""
        guard var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: true),
            let requested = URLComponents(string: path)
        else { throw .invalidURL(baseURL.absoluteString + path) }
        components.percentEncodedPath += requested.percentEncodedPath
        components.percentEncodedQuery = requested.percentEncodedQuery
        guard let url = components.url else { throw .invalidURL(baseURL.absoluteString + path) }
        return url
    }

    /// The fields as Errand sends them: one value per name, repeats joined as RFC 9110 §5.3
    /// allows (`Cookie` with `; `, as RFC 6265 §5.4 writes it).
    private static func headers(of fields: HTTPFields) -> [String: String] {
        var headers: [String: String] = [:]
        var names: [String: String] = [:]
        for field in fields {
            let key = field.name.canonicalName
            guard let name = names[key] else {
                names[key] = field.name.rawName
                headers[field.name.rawName] = field.value
                continue
            }
            headers[name, default: ""] += (field.name == .cookie ? "; " : ", ") + field.value
        }
        return headers
    }
}
