import Foundation

/// A bearer token that expires: what ``SessionCookieAuthenticator`` keeps fresh, read from an
/// OAuth 2.0 token response (RFC 6749 §5.1: `access_token`, `expires_in`).
public struct AccessToken: AuthenticationCredential, Codable, Hashable {
    /// The token, sent as `Authorization: Bearer <value>`.
    public var value: String
    /// When it expires; `nil` when the server did not say.
    public var expiresAt: Date?

    /// Creates a token.
    /// - Parameters:
    ///   - value: The token.
    ///   - expiresAt: Default `nil`: it never needs refreshing before the server refuses it.
    public init(value: String, expiresAt: Date? = nil) {
        self.value = value
        self.expiresAt = expiresAt
    }

    /// Reads the token response `response`, its `expires_in` counted from now.
    /// - Throws: ``ErrandError/decoding(_:)`` when it holds no `access_token` string, or one with
    ///   a control character: sent in a header field, a line break would end the field and start
    ///   another of the server's choosing.
    public init(tokenResponse response: Response) throws(ErrandError) {
        guard let object = response.jsonObject as? [String: Any], let value = object["access_token"] as? String,
            !value.isEmpty
        else {
            throw .decoding("the token response holds no access_token string")
        }
        guard !value.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else {
            throw .decoding("the token response's access_token holds a control character")
        }
        let lifetime = (object["expires_in"] as? NSNumber)?.doubleValue
        self.init(value: value, expiresAt: lifetime.flatMap { $0.isFinite ? Date().addingTimeInterval($0) : nil })
    }

    /// Whether it expires within 30 seconds: refreshed before it is sent, rather than after a `401`.
    public var requiresRefresh: Bool {
        expiresAt.map { $0.timeIntervalSinceNow < 30 } ?? false
    }
}
