/// What a private HTTP cache may store, and which stored variant answers a request: RFC 9111 §3
/// and §4.1, for ``BaseRequest/followsHTTPCaching``.
package enum HTTPStorageRules {
    /// Whether the response to `method` may be stored (§3): a final status other than `206` and
    /// `304`, which this cache does not combine; no `no-store` from either side; and something
    /// that lets a cache keep it — `public`, `private` (this cache is private), `max-age`,
    /// `Expires`, or a status that may be given a heuristic lifetime. `must-understand` lets a
    /// status whose rules this cache knows be stored despite `no-store`, and no other status at
    /// all. Only `GET` is stored, as in
    /// every browser; a `HEAD` answer freshens the `GET` stored under the same key (§4.3.5).
    package static func mayStore(
        method: String, statusCode: Int, request: CacheControl, response: CacheControl,
        responseHeaders: [String: String]
    ) -> Bool {
        // must-understand stands in for no-store where the status's caching rules are known (§5.2.2.3).
        let mustUnderstand = response.contains("must-understand")
        guard storedMethods.contains(method.uppercased()), statusCode >= 200, statusCode != 206, statusCode != 304,
            !request.contains("no-store"), !mustUnderstand || understoodStatusCodes.contains(statusCode),
            mustUnderstand || !response.contains("no-store")
        else { return false }
        return response.contains("public") || response.contains("private") || response.contains("max-age")
            || responseHeaders.headerField("Expires") != nil
            || ResponseFreshness.heuristicallyCacheableStatusCodes.contains(statusCode)
    }

    /// The fields that choose among a URL's stored responses, as a `Vary` value: those the
    /// response's `Vary` names, and `Authorization` — and the fields the request marked as
    /// credentials (``SentFields/markedCredentials``) — when the request carried one and the
    /// response does not say a shared cache may reuse it (`public` or `s-maxage`, and not
    /// `private`: RFC 9111 §3.5). One agent serves every account of an app, so Errand is a private
    /// cache for each credential rather than for the device: a response to one credential
    /// answers that credential alone, whatever its other directives.
    package static func selectingFields(vary: String?, response: CacheControl, requestHeaders: [String: String])
        -> String?
    {
        let shareable = (response.contains("public") || response.contains("s-maxage")) && !response.contains("private")
        let credentials = ["Authorization", SentFields.markedCredentials].filter {
            requestHeaders.headerField($0) != nil
        }
        guard !credentials.isEmpty, !shareable else { return vary }
        return ([vary].compactMap { $0 } + credentials).joined(separator: ", ")
    }

    /// The request's values of the fields a response's `Vary` names, normalized, by lower-case
    /// name, `nil` for a field it did not send — what a stored variant keeps, and what a later
    /// request must send alike (§4.1). `nil` for `Vary: *` anywhere in the list, which no request
    /// matches.
    package static func variant(vary: String?, requestHeaders: [String: String]) -> [String: String?]? {
        var selected: [String: String?] = [:]
        for member in (vary ?? "").split(separator: ",") {
            let name = member.trimmed.lowercased()
            guard name != "*" else { return nil }
            guard !name.isEmpty else { continue }
            selected.updateValue(value(of: name, in: requestHeaders), forKey: name)
        }
        return selected
    }

    /// Whether a request sends the stored variant's selecting fields alike; a field absent from
    /// both matches.
    package static func matches(_ stored: [String: String?], requestHeaders: [String: String]) -> Bool {
        stored.allSatisfy { name, storedValue in value(of: name, in: requestHeaders) == storedValue }
    }

    private static func value(of name: String, in headers: [String: String]) -> String? {
        headers.headerField(name).map { normalized($0, field: name) }
    }

    /// A field value as variants compare it: the members of its list, trimmed and joined by
    /// commas, so that spaces and separate lines make no difference; `Accept-Language` in lower
    /// case and sorted, since neither case nor order changes what it asks for.
    /// A credential (`Authorization`, `Cookie`, `Proxy-Authorization`) as a hash: entries and
    /// their keys keep it, and neither may hold the credential itself.
    static func normalized(_ value: String, field: String) -> String {
        let members = value.split(separator: ",").map(\.trimmed).filter { !$0.isEmpty }
        if credentialFields.contains(field) {
            let joined = members.joined(separator: ",")
            return "hash " + FNV1a.hex(of: joined.utf8) + FNV1a.hex(of: joined.utf8, seed: 0x9e37_79b9_7f4a_7c15)
        }
        guard field == "accept-language" else { return members.joined(separator: ",") }
        return members.map { $0.lowercased().replacingOccurrences(of: " ", with: "") }.sorted().joined(separator: ",")
    }

    private static let storedMethods: Set<String> = ["GET"]

    /// The fields whose values are credentials, by lower-case name.
    private static let credentialFields: Set<String> = [
        "authorization", "cookie", "proxy-authorization", SentFields.markedCredentials,
    ]

    /// The statuses whose caching rules this cache implements, for `must-understand`: those it
    /// may give a heuristic lifetime, and the redirects it stores by their explicit one.
    private static let understoodStatusCodes = ResponseFreshness.heuristicallyCacheableStatusCodes.union([
        302, 303, 307,
    ])
}
