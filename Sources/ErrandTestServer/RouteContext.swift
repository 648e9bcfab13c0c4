import Foundation

/// What a handler gets: the request, the path parameters its pattern captured, and the server.
struct RouteContext {
    let request: HTTPRequest
    /// Decoded values of the pattern's `{name}` segments.
    let parameters: [String: String]
    let server: ServerState
    /// The body to read, for routes that stream it; `request.body` is empty then.
    let body: RequestBodyReader?

    /// Waits like `Thread.sleep`, but returns as soon as the server stops so `stop()` is prompt.
    func sleep(seconds: TimeInterval) {
        server.sleep(seconds: seconds)
    }
}
