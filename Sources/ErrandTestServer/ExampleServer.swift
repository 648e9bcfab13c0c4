/// Where an example sends its requests: the server named by `--base-url`, else an embedded
/// ``TestServer`` it starts (and stops when this value is dropped or ``stop()`` is called).
public struct ExampleServer: Sendable {
    /// The base URL, without a trailing slash.
    public let baseURL: String
    /// The embedded server; `nil` when `--base-url` named another.
    public let embedded: TestServer?

    /// Reads `--base-url URL` from `arguments`; without it, starts an embedded server and says so.
    /// - Throws: ``TestServerError`` when the embedded server cannot start.
    public init(arguments: [String]) throws {
        if let index = arguments.firstIndex(of: "--base-url"), index + 1 < arguments.count {
            baseURL = arguments[index + 1]
            embedded = nil
        } else {
            let server = try TestServer()
            baseURL = server.baseURL
            embedded = server
            print("Started the embedded test server at \(server.baseURL).")
        }
    }

    /// Stops the embedded server, if there is one.
    public func stop() {
        embedded?.stop()
    }
}
