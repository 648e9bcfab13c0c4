import Foundation

/// `GET /http-cache/{name}`: the ``CacheableResource`` a test set for `name`, answered as an
/// origin server answers a conditional request (RFC 9110 §13.2.2): `If-None-Match` first, by
/// weak comparison; else `If-Modified-Since`, equal to `Last-Modified`. 404 for an unknown name.
/// A full answer is `text/plain` unless the resource's fields name a `Content-Type`.
/// An unsafe method on it answers as the request's `Answer-Status` (default 204),
/// `Answer-Location` and `Answer-Content-Location` fields say, changing nothing.
enum HTTPCacheRoutes {
    static let all: [Route] = [
        Route(["GET", "HEAD"], "/http-cache/{name}", handler: resource),
        Route(["POST", "PUT", "DELETE", "PATCH"], "/http-cache/{name}", handler: change),
    ]

    private static func change(_ context: RouteContext) -> HTTPResponse {
        let request = context.request.headers
        let status = request.first("Answer-Status").flatMap { Int($0) } ?? 204
        var headers: [HTTPHeader] = []
        if let location = request.first("Answer-Location") { headers.append(HTTPHeader("Location", location)) }
        if let location = request.first("Answer-Content-Location") {
            headers.append(HTTPHeader("Content-Location", location))
        }
        return HTTPResponse(status: status, headers: headers)
    }

    private static func resource(_ context: RouteContext) -> HTTPResponse {
        let name = context.parameters["name"] ?? ""
        guard let resource = context.server.httpCache.resource(name) else { return .notFound }
        var headers = resource.headers.map { HTTPHeader($0.key, $0.value) }
        if let etag = resource.etag { headers.append(HTTPHeader("ETag", etag)) }
        if let lastModified = resource.lastModified { headers.append(HTTPHeader("Last-Modified", lastModified)) }
        let notModified = isNotModified(resource, context.request.headers)
        context.server.httpCache.count(name, notModified: notModified)
        guard !notModified else {
            return HTTPResponse(
                status: 304, headers: headers + resource.notModifiedHeaders.map { HTTPHeader($0.key, $0.value) })
        }
        if resource.headers.keys.allSatisfy({ $0.lowercased() != "content-type" }) {
            headers.append(HTTPHeader("Content-Type", "text/plain; charset=utf-8"))
        }
        return HTTPResponse(status: resource.status, headers: headers, body: Data(resource.body.utf8))
    }

    private static func isNotModified(_ resource: CacheableResource, _ request: [HTTPHeader]) -> Bool {
        if let ifNoneMatch = request.first("If-None-Match") {
            guard let etag = resource.etag else { return false }
            let tags = ifNoneMatch.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            return tags.contains("*") || tags.contains { weak($0) == weak(etag) }
        }
        guard let since = request.first("If-Modified-Since"), let lastModified = resource.lastModified else {
            return false
        }
        return since == lastModified
    }

    private static func weak(_ tag: String) -> String {
        tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag
    }
}
