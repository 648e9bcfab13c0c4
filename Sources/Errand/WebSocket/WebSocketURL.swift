import Foundation

/// The two spellings of a WebSocket's address: `ws`/`wss`, as apps, monitors and HAR files see
/// it, and `http`/`https`, which the opening handshake is sent to (RFC 6455 §3).
enum WebSocketURL {
    /// `url` with `http` as `ws` and `https` as `wss`; other schemes (`ws`, `wss`, `http+unix`) unchanged.
    static func webSocket(_ url: URL) -> URL {
        replacingScheme(of: url, ["http": "ws", "https": "wss"])
    }

    /// `url` with `ws` as `http` and `wss` as `https`; other schemes unchanged.
    static func http(_ url: URL) -> URL {
        replacingScheme(of: url, ["ws": "http", "wss": "https"])
    }

    private static func replacingScheme(of url: URL, _ replacements: [String: String]) -> URL {
        guard let scheme = url.scheme, let replacement = replacements[scheme.lowercased()],
            var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else { return url }
        components.scheme = replacement
        return components.url ?? url
    }
}
