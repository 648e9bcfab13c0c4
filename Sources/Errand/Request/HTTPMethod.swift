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
    /// `OPTIONS`: what the server allows for the URL.
    case options = "OPTIONS"
    /// `TRACE`: the request as the server received it.
    case trace = "TRACE"

    /// Whether `arguments` travel in the query string (GET, HEAD, DELETE, OPTIONS, TRACE) rather
    /// than the body.
    var encodesArgumentsInQuery: Bool {
        switch self {
        case .get, .head, .delete, .options, .trace: true
        case .post, .put, .patch: false
        }
    }
}
