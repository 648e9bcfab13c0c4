import Foundation

/// What a handler gets: the request, the path parameters its pattern captured, and the server.
struct RouteContext {
    let request: HTTPRequest
    /// Decoded values of the pattern's `{name}` segments.
    let parameters: [String: String]
    let server: ServerState
    /// The body to read, for routes that stream it; `request.body` is empty then.
    let body: RequestBodyReader?

    /// The connection, for a route that streams its body and answers while it reads (full
    /// duplex): what it writes goes on the wire as it is. `nil` for other routes.
    var connection: RawConnection? {
        body.map { RawConnection(descriptor: $0.descriptor, server: server) }
    }

    /// Waits like `Thread.sleep`, but returns as soon as the server stops so `stop()` is prompt.
    func sleep(seconds: TimeInterval) {
        server.sleep(seconds: seconds)
    }
}

extension RouteContext {
    /// The whole-number query parameter `name` (its last value): `.some(nil)` when it is absent,
    /// `nil` when it is not a whole number within `range`, so that a typo fails loudly instead of
    /// being ignored.
    func queryInteger(_ name: String, in range: ClosedRange<Int>) -> Int?? {
        guard let text = request.queryItems.last(where: { $0.name == name })?.value else { return .some(nil) }
        guard let value = Int(text), range.contains(value) else { return nil }
        return value
    }

    /// The last value of the query parameter `name`, decoded.
    func query(_ name: String) -> String? {
        request.queryItems.last { $0.name == name }?.value
    }
}
