import Foundation

/// httpbin's `/redirect-to?url=…&status_code=…` (any method; 302 by default, 3xx only): answers
/// with `Location: url`, which may name another origin, so that a client's redirect handling —
/// method and body kept or dropped, credentials stripped — can be observed at the target.
enum RedirectRoutes {
    static let all: [Route] = [
        Route(.any, "/redirect-to", handler: redirectTo)
    ]

    private static func redirectTo(_ context: RouteContext) -> HTTPResponse {
        let query = context.request.queryItems
        guard let location = query.last(where: { $0.name == "url" })?.value else {
            return .text("url is required\n", status: 400)
        }
        let status = query.last { $0.name == "status_code" }.flatMap { Int($0.value) } ?? 302
        guard (300..<400).contains(status) else { return .text("status_code must be 3xx\n", status: 400) }
        return HTTPResponse(status: status, headers: [HTTPHeader("Location", location)])
    }
}
