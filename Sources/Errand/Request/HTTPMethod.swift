/// The HTTP method of a request.
public enum HTTPMethod: String, Sendable, CaseIterable {
    case get = "GET"
    case post = "POST"
    case head = "HEAD"
    case put = "PUT"
    case delete = "DELETE"
    case patch = "PATCH"

    /// Whether `arguments` travel in the query string (GET, HEAD, DELETE) rather than the body.
    var encodesArgumentsInQuery: Bool {
        switch self {
        case .get, .head, .delete: true
        case .post, .put, .patch: false
        }
    }
}
