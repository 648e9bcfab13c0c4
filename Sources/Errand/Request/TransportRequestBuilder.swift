import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Turns a request definition into the plain ``TransportRequest`` a transport sends.
enum TransportRequestBuilder {
    /// What the agent sends: the request, and a multipart body too large for memory that still
    /// has to be encoded into a file (off the calling thread) to become its `bodyFileURL`.
    struct Output {
        var request: TransportRequest
        var largeMultipartBody: MultipartFormData?
    }

    /// The request as sent. It carries Errand's default `User-Agent` unless its headers or the
    /// session configuration name one; a custom `URLRequest` is sent as it is.
    /// `sessionSetsUserAgent` is whether the session configuration names a `User-Agent`; an agent
    /// works it out once, as its transport reads the configuration once. `nil` looks it up.
    static func build(_ request: any BaseRequest, config: NetworkConfig, sessionSetsUserAgent: Bool? = nil)
        throws(ErrandError) -> Output
    {
        if let custom = request.buildCustomURLRequest() {
            var output = Output(request: try transportRequest(from: custom))
            if request.usesCookies && custom.httpShouldHandleCookies { output.request.cookieJar = config.cookieJar }
            return output
        }
        let sendsBody = !request.method.encodesArgumentsInQuery
        let uploadBody = sendsBody ? try Self.uploadBody(of: request) : nil
        let queryArguments = !sendsBody || uploadBody != nil ? request.arguments : nil
        let query = try queryArguments.map { arguments throws(ErrandError) in
            try ArgumentValue.object(arguments).formEncoded
        }
        var output = Output(
            request: TransportRequest(
                url: try RequestURLBuilder.url(for: request, config: config, query: query ?? ""),
                method: request.method.rawValue, timeoutInterval: request.timeoutInterval,
                timeoutIntervalForResource: request.timeoutIntervalForResource))
        if let uploadBody {
            try addBody(uploadBody, to: &output.request)
        } else if sendsBody, let constructingBody = request.constructingBody {
            let form = try MultipartFormData.build(arguments: request.arguments, constructingBody: constructingBody)
            output.request.headers["Content-Type"] = form.contentType
            if try form.contentLength() <= MultipartFormData.inMemoryLimit {
                output.request.body = try form.encodedData()
            } else {
                output.largeMultipartBody = form
            }
        } else if sendsBody, let arguments = request.arguments {
            let encoded = try ArgumentValue.object(arguments)
            switch request.requestSerializerType {
            case .http:
                output.request.headers["Content-Type"] = "application/x-www-form-urlencoded; charset=utf-8"
                output.request.body = Data(encoded.formEncoded.utf8)
            case .json:
                output.request.headers["Content-Type"] = "application/json"
                output.request.body = Data(encoded.json.utf8)
            }
        }
        if let credentials = request.authorization {
            output.request.headers["Authorization"] =
                "Basic " + Data("\(credentials.username):\(credentials.password)".utf8).base64EncodedString()
        }
        // Headers the request names override the ones derived above, as in YTKNetwork.
        for (name, value) in request.headers {
            output.request.headers.setHeaderField(name, value)
        }
        UserAgent.addDefault(to: &output.request.headers, config: config, sessionSetsUserAgent: sessionSetsUserAgent)
        if request.usesCookies { output.request.cookieJar = config.cookieJar }
        return output
    }

    /// The request's ``BaseRequest/uploadBody``, or the file of its ``BaseRequest/resumableUploadPath``.
    /// - Throws: ``ErrandError/serialization(_:)`` when it has both.
    private static func uploadBody(of request: any BaseRequest) throws(ErrandError) -> UploadBody? {
        guard let path = request.resumableUploadPath else { return request.uploadBody }
        guard request.uploadBody == nil else {
            throw .serialization(
                "\(type(of: request)) sets both uploadBody and resumableUploadPath: the body is one or the other")
        }
        return .file(URL(fileURLWithPath: path))
    }

    private static func addBody(_ body: UploadBody, to request: inout TransportRequest) throws(ErrandError) {
        request.headers["Content-Type"] = "application/octet-stream"
        switch body {
        case .data(let data):
            request.body = data
        case .file(let url):
            request.bodyFileURL = url
            // A declared length, rather than chunked encoding, which some servers refuse for uploads.
            request.headers["Content-Length"] = String(try UploadFile.size(of: url))
        case .stream(let stream):
            request.bodyStream = stream
            guard let length = stream.length else { return }
            guard length >= 0 else {
                throw .serialization("a streamed upload body cannot declare a negative length (\(length) bytes)")
            }
            request.headers["Content-Length"] = String(length)
        }
    }

    private static func transportRequest(from urlRequest: URLRequest) throws(ErrandError) -> TransportRequest {
        guard let url = urlRequest.url, url.scheme != nil, !(url.host ?? "").isEmpty else {
            throw .invalidURL(urlRequest.url?.absoluteString ?? "custom URLRequest without a URL")
        }
        return TransportRequest(
            url: url, method: urlRequest.httpMethod ?? "GET", headers: urlRequest.allHTTPHeaderFields ?? [:],
            body: urlRequest.httpBody, timeoutInterval: urlRequest.timeoutInterval)
    }
}
