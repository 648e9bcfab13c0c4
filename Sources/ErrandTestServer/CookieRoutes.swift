import Foundation

/// httpbin's cookie endpoints: `GET /cookies` echoes the `Cookie` header as
/// `{"cookies": {name: value}}`; `GET /cookies/set?name=value…` sets each with `Path=/` and
/// redirects (302) to `/cookies`.
enum CookieRoutes {
    static let all: [Route] = [
        Route(["GET"], "/cookies", handler: cookies),
        Route(["GET"], "/cookies/set", handler: set),
    ]

    private static func cookies(_ context: RouteContext) -> HTTPResponse {
        var cookies: [String: String] = [:]
        for header in context.request.headers.values(for: "Cookie") {
            for pair in header.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                if parts.count == 2 { cookies[parts[0]] = parts[1] }
            }
        }
        return .json(["cookies": cookies])
    }

    private static func set(_ context: RouteContext) -> HTTPResponse {
        var headers = [HTTPHeader("Location", "/cookies")]
        for item in context.request.queryItems {
            headers.append(HTTPHeader("Set-Cookie", "\(item.name)=\(item.value); Path=/"))
        }
        return HTTPResponse(status: 302, headers: headers)
    }
}
