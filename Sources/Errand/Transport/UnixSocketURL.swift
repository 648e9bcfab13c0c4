import Foundation

/// A URL that reaches an HTTP server on a Unix domain socket, spelled as AsyncHTTPClient spells
/// it: `http+unix://` (or `https+unix://`), the socket's path percent-encoded as the host, then
/// the request's path: `http+unix://%2Fvar%2Frun%2Fdocker.sock/v1.43/info`.
struct UnixSocketURL: Equatable {
    /// The socket's file system path.
    let socketPath: String
    /// The same request as plain `http` or `https` to `localhost`, which the server sees.
    let httpURL: URL

    /// Whether `url` names a Unix socket, whether or not it names one correctly.
    static func isUnixSocket(_ url: URL) -> Bool {
        guard let scheme = url.scheme?.lowercased() else { return false }
        return scheme == "http+unix" || scheme == "https+unix"
    }

    /// `url` taken apart; `nil` when it is not a Unix-socket URL or names no socket.
    init?(_ url: URL) {
        guard Self.isUnixSocket(url), var components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let scheme = components.scheme?.lowercased(), let path = components.host, !path.isEmpty
        else { return nil }
        components.scheme = String(scheme.dropLast("+unix".count))
        components.percentEncodedHost = "localhost"
        components.port = nil
        guard let httpURL = components.url else { return nil }
        socketPath = path
        self.httpURL = httpURL
    }
}
