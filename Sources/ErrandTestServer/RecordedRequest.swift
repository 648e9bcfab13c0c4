/// A request the server received, as tests inspect it through ``TestServer/receivedRequests(path:)``:
/// e.g. which `Range` and `If-Range` a resumed download sent.
public struct RecordedRequest: Sendable {
    /// `GET`, `POST`, ... exactly as sent.
    public let method: String
    /// The path as sent, still percent-encoded, without the query.
    public let path: String
    /// The query without `?`, still percent-encoded; empty when there is none.
    public let query: String
    /// Every header in the order sent, names spelled as sent.
    public let headers: [(name: String, value: String)]

    /// The first value of the header `name`, compared case-insensitively.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }

    init(_ request: HTTPRequest) {
        method = request.method
        path = String(request.rawPath)
        query = String(request.rawQuery)
        headers = request.headers.map { ($0.name, $0.value) }
    }
}
