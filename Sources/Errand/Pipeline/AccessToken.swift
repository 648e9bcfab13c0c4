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
    /// - Throws: ``ErrandError/decoding(_:)`` when it holds no `access_token` string.
    public init(tokenResponse response: Response) throws(ErrandError) {
        guard let object = response.jsonObject as? [String: Any], let value = object["access_token"] as? String,
            !value.isEmpty
        else {
            throw .decoding("the token response holds no access_token string")
        }
        let lifetime = (object["expires_in"] as? NSNumber)?.doubleValue
        self.init(value: value, expiresAt: lifetime.flatMap { $0.isFinite ? Date().addingTimeInterval($0) : nil })
    }

    /// Whether it expires within 30 seconds: refreshed before it is sent, rather than after a `401`.
    public var requiresRefresh: Bool {
        expiresAt.map { $0.timeIntervalSinceNow < 30 } ?? false
    }
}
