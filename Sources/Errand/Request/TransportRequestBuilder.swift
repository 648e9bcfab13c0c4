import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Turns a request definition into the plain ``TransportRequest`` a transport sends.
enum TransportRequestBuilder {
    static func build(_ request: any BaseRequest, config: NetworkConfig) throws(ErrandError) -> TransportRequest {
        if let custom = request.buildCustomURLRequest() {
            return try transportRequest(from: custom)
        }
        var url = try RequestURLBuilder.url(for: request, config: config)
        var headers: [String: String] = [:]
        var body: Data?
        if let arguments = request.arguments {
            let encoded = try ArgumentValue.object(arguments)
            if request.method.encodesArgumentsInQuery {
                url = try appendingQuery(encoded.formEncoded, to: url)
            } else {
                switch request.requestSerializerType {
                case .http:
                    headers["Content-Type"] = "application/x-www-form-urlencoded; charset=utf-8"
                    body = Data(encoded.formEncoded.utf8)
                case .json:
                    headers["Content-Type"] = "application/json"
                    body = Data(encoded.json.utf8)
                }
            }
        }
        if let credentials = request.authorization {
            headers["Authorization"] =
                "Basic " + Data("\(credentials.username):\(credentials.password)".utf8).base64EncodedString()
        }
        // Headers the request names override the ones derived above, as in YTKNetwork.
        for (name, value) in request.headers {
            headers = headers.filter { $0.key.caseInsensitiveCompare(name) != .orderedSame }
            headers[name] = value
        }
        return TransportRequest(
            url: url, method: request.method.rawValue, headers: headers, body: body,
            timeoutInterval: request.timeoutInterval)
    }

    private static func transportRequest(from urlRequest: URLRequest) throws(ErrandError) -> TransportRequest {
        guard let url = urlRequest.url, url.scheme != nil, !(url.host ?? "").isEmpty else {
            throw .invalidURL(urlRequest.url?.absoluteString ?? "custom URLRequest without a URL")
        }
        return TransportRequest(
            url: url, method: urlRequest.httpMethod ?? "GET", headers: urlRequest.allHTTPHeaderFields ?? [:],
            body: urlRequest.httpBody, timeoutInterval: urlRequest.timeoutInterval)
    }

    private static func appendingQuery(_ query: String, to url: URL) throws(ErrandError) -> URL {
        guard !query.isEmpty else { return url }
        var string = url.absoluteString
        let fragment = string.firstIndex(of: "#").map { String(string[$0...]) } ?? ""
        string.removeLast(fragment.count)
        let separator = string.firstIndex(of: "?") == nil ? "?" : (string.last == "?" || string.last == "&" ? "" : "&")
        guard let extended = URL(string: string + separator + query + fragment) else {
            throw .invalidURL(string + separator + query)
        }
        return extended
    }
}
