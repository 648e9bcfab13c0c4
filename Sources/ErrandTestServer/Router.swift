/// Finds the route for a request and answers 404, 405 or OPTIONS itself, the way Flask does.
struct Router: Sendable {
    let routes: [Route]

    func response(to request: HTTPRequest, server: ServerState, body: RequestBodyReader? = nil) -> HTTPResponse {
        server.record(RecordedRequest(request))
        var response = dispatch(request, server: server, body: body)
        // httpbin's `after_request` hook puts these on every response, errors included.
        response.headers.append(HTTPHeader("Access-Control-Allow-Origin", request.headers.first("Origin") ?? "*"))
        response.headers.append(HTTPHeader("Access-Control-Allow-Credentials", "true"))
        return response
    }

    /// Whether the route that will answer `request` reads the body itself.
    func streamsBody(_ request: HTTPRequest) -> Bool {
        request.method != "OPTIONS"
            && candidates(for: request).first { $0.0.methods.allows(request.method) }?.0.streamsBody == true
    }

    private func candidates(for request: HTTPRequest) -> [(Route, [String: String])] {
        let components = Self.pathComponents(request.rawPath)
        return routes.compactMap { route in route.match(components).map { (route, $0) } }
    }

    private func dispatch(_ request: HTTPRequest, server: ServerState, body: RequestBodyReader?) -> HTTPResponse {
        let candidates = candidates(for: request)
        guard !candidates.isEmpty else { return .notFound }

        let allowed = candidates.reduce(into: Set<String>()) { $0.formUnion($1.0.methods.advertised) }
        let allowHeader = HTTPHeader("Allow", allowed.sorted().joined(separator: ", "))

        if request.method == "OPTIONS" {
            var response = HTTPResponse.text("", status: 200, contentType: "text/html; charset=utf-8")
            response.headers.append(allowHeader)
            response.headers += [
                HTTPHeader("Access-Control-Allow-Methods", "GET, POST, PUT, DELETE, PATCH, OPTIONS"),
                HTTPHeader("Access-Control-Max-Age", "3600"),
            ]
            if let requested = request.headers.first("Access-Control-Request-Headers") {
                response.headers.append(HTTPHeader("Access-Control-Allow-Headers", requested))
            }
            return response
        }
        guard let (route, parameters) = candidates.first(where: { $0.0.methods.allows(request.method) }) else {
            return .htmlError(405, "The method is not allowed for the requested URL.", headers: [allowHeader])
        }
        return route.handler(RouteContext(request: request, parameters: parameters, server: server, body: body))
    }

    /// The decoded path split on `/`. Repeated slashes count as one, as werkzeug's
    /// `merge_slashes` does, but a trailing slash is kept so `/get/` does not match `/get`.
    static func pathComponents(_ rawPath: Substring) -> [Substring] {
        let path = URLEncoding.unquote(rawPath)
        var components = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        let trailingSlash = components.count > 1 && components.last?.isEmpty == true
        components.removeAll { $0.isEmpty }
        return Array(components) + (trailingSlash ? [""] : [])
    }
}
