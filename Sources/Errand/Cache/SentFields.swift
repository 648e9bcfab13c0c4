import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The header fields a request goes out with, as the cache compares them with a stored
/// response's `Vary` (RFC 9111 §4.1): the fields it was built and adapted with, and those the
/// agent's session adds below the pipeline — its additional fields — and the cookies the request's
/// ``TransportRequest/cookieJar`` holds for its URL, as both transports add them.
package struct SentFields: Sendable {
    private let additional: [String: String]

    /// The fields a session of `configuration` adds, read once, as a transport reads them.
    package init(configuration: URLSessionConfiguration) {
        var additional: [String: String] = [:]
        for (name, value) in configuration.httpAdditionalHeaders ?? [:] {
            additional[String(describing: name)] = String(describing: value)
        }
        self.additional = additional
    }

    /// The name under which ``headers(of:)`` gives the fields a request marks as credentials
    /// beside the standard ones (what an `Authenticator` applied: `X-API-Key`): no field can be
    /// named so, as `:` is no token character, so it stands for them all.
    package static let markedCredentials = ":credentials"

    /// `request`'s fields with the session's added where it names none of its own, and the fields
    /// it marks as credentials as one more (``markedCredentials``), so that a response to one
    /// credential answers it alone, whatever the field that carries it.
    package func headers(of request: TransportRequest) -> [String: String] {
        headers(of: request, jarCookieHeader: request.jarCookieHeader)
    }

    /// `request`'s fields as ``headers(of:)`` gives them, with `jarCookieHeader` as the cookies
    /// its jar added: what the jar gave when it went out, for a request whose response is in.
    package func headers(of request: TransportRequest, jarCookieHeader: String?) -> [String: String] {
        // As the request goes out: a field whose name marks a secret is a credential too.
        let request = request.markingSecretHeaders()
        var headers = request.headers
        for (name, value) in additional where headers.headerField(name) == nil {
            headers[name] = value
        }
        if request.headers.headerField("Cookie") == nil, let cookie = jarCookieHeader { headers["Cookie"] = cookie }
        let marked = request.credentialHeaders.compactMap { name in
            request.headers.headerField(name).map { "\(name.lowercased())=\($0)" }
        }
        // A response may name the field itself in its `Vary`, and a variant keeps the values it
        // varies on: as for `Authorization`, the hash of the credential, never the credential.
        // (The standard credential fields are hashed by name; the session's added ones, by theirs.)
        for name in headers.keys
        where (request.isCredentialHeader(name) || Redactor.isSensitive(name))
            && !TransportRequest.standardCredentialHeaders.contains(name.lowercased())
        {
            headers[name] = headers[name].map { HTTPStorageRules.normalized($0, field: Self.markedCredentials) }
        }
        if !marked.isEmpty { headers[Self.markedCredentials] = marked.sorted().joined(separator: "\n") }
        return headers
    }
}
