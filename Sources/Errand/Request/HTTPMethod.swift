/// The HTTP method of a request.
public enum HTTPMethod: String, Sendable, CaseIterable {
    /// `GET`.
    case get = "GET"
    /// `POST`.
    case post = "POST"
    /// `HEAD`.
    case head = "HEAD"
    /// `PUT`.
    case put = "PUT"
    /// `DELETE`.
    case delete = "DELETE"
    /// `PATCH`.
    case patch = "PATCH"

    /// Whether `arguments` travel in the query string (GET, HEAD, DELETE) rather than the body.
    var encodesArgumentsInQuery: Bool {
        switch self {
        case .get, .head, .delete: true
        case .post, .put, .patch: false
        }
    }
}
