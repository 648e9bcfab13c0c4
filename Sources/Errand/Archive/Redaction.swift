import Foundation

/// What a recording (``HARRecorder``) masks: values of the named header fields, query items and
/// JSON fields are replaced by `<redacted>` before anything is written, so a HAR file can be
/// shared without the credentials of the session it recorded.
///
/// Header names match case-insensitively; query item and JSON field names match exactly, as
/// their protocols compare them. JSON field names match at any depth; both query item and JSON
/// field names mask the fields of form-encoded bodies (`a=1&token=x`) and the parts of
/// `multipart/form-data` bodies, for one request's `arguments` go out as any of these — a JSON
/// field's name also as the innermost key of a nested argument (`account[password]`).
///
/// A URL's user information (`https://user:password@host/`, `https://token@host/`) is always
/// masked whole. Every URL written anywhere in an entry — the request's, a `Location`, one quoted
/// in an error such as the last hop of a refused redirect chain — has its masked query items
/// masked. A value masked anywhere is then looked for everywhere else and replaced there too —
/// a server echoing it, the `Basic` credentials a client built from a URL's password — so a
/// masked value reaches the file in neither plain nor base64 text. Equality compares the sets as given.
public struct Redaction: Sendable, Equatable {
    /// Header fields whose values are masked, matched case-insensitively; `Cookie` and
    /// `Set-Cookie` mask the recorded cookies' values too. Default empty.
    public var headers: Set<String>
    /// Query items whose values are masked, in URLs and in form-encoded and multipart bodies.
    /// Default empty.
    public var queryItems: Set<String>
    /// JSON object fields whose values are masked wherever they occur in a JSON body, and fields
    /// of form-encoded and multipart bodies. Default empty.
    public var jsonFields: Set<String>

    /// Creates a redaction masking exactly the names given; each set is empty by default, which
    /// masks nothing — start from ``default`` to keep the usual credentials masked.
    public init(headers: Set<String> = [], queryItems: Set<String> = [], jsonFields: Set<String> = []) {
        self.headers = headers
        self.queryItems = queryItems
        self.jsonFields = jsonFields
    }

    /// Masks the header fields that carry credentials: `Authorization`, `Proxy-Authorization`,
    /// `Cookie` and `Set-Cookie`; no query items or JSON fields.
    public static let `default` = Redaction(headers: [
        "Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie",
    ])

    /// ``default``, masking also the query items and JSON fields that usually carry credentials —
    /// `access_token`, `refresh_token`, `id_token`, `token`, `api_key`, `apikey`, `key`,
    /// `password`, `secret`, `client_secret`, `signature`, `sig`, `code`, `session` — for logs
    /// and traces, which should show a URL without what it authenticates with.
    public static let credentials = Redaction.default.adding(
        queryItems: credentialNames, jsonFields: credentialNames)

    private static let credentialNames: Set<String> = [
        "access_token", "refresh_token", "id_token", "token", "api_key", "apikey", "key", "password", "secret",
        "client_secret", "signature", "sig", "code", "session",
    ]

    /// This redaction, masking also the names given: for an API's own secrets, such as
    /// `Redaction.default.adding(queryItems: ["api_key"], jsonFields: ["password"])`.
    public func adding(
        headers: Set<String> = [], queryItems: Set<String> = [], jsonFields: Set<String> = []
    ) -> Redaction {
        Redaction(
            headers: self.headers.union(headers), queryItems: self.queryItems.union(queryItems),
            jsonFields: self.jsonFields.union(jsonFields))
    }
}

// MARK: Masking

extension Redaction {
    /// What replaces every masked value: the one the debug log uses, so both read alike.
    static var placeholder: String { Redactor.placeholder }

    /// Whether the header field `name` is masked.
    func masksHeader(_ name: String) -> Bool {
        headers.contains { $0.equalsIgnoringASCIICase(name) }
    }

    /// The header field's value, or the placeholder when it is masked.
    func headerValue(_ name: String, _ value: String) -> String {
        masksHeader(name) ? Self.placeholder : value
    }

    /// `url` as text with its user information and the values of the query items this
    /// redaction names replaced by `<redacted>`: a URL fit for a log line or a trace.
    public func url(_ url: URL) -> String {
        self.url(string: url.absoluteString)
    }

    /// `text` — an error's description, a message — with every URL in it masked as ``url(_:)``
    /// masks one: an ``ErrandError`` may quote URLs, such as the hops of a refused redirect, with
    /// query items other than ``credentials`` masks.
    public func text(_ text: String) -> String {
        var masked: [String] = []
        return maskingURLs(in: text, masked: &masked)
    }

    /// A URL, absolute or relative (a `Location` value), with its user information and masked
    /// query items' values replaced (see ``url(string:masked:)``).
    func url(string: String) -> String {
        var masked: [String] = []
        return url(string: string, masked: &masked)
    }

    /// Query items as name and value pairs, masked values replaced.
    func queryPairs(of url: URL) -> [(name: String, value: String)] {
        guard let query = url.query(percentEncoded: true) else { return [] }
        return formPairs(query)
    }

    /// The names whose values a form-encoded body masks.
    var bodyFieldNames: Set<String> { queryItems.union(jsonFields) }

    /// The decoded pairs of form-encoded text (`a=1&b=2`), the values of `names` (default the
    /// query items) replaced, or, for a body's fields (`names` ``bodyFieldNames``), of the names
    /// ``masksBodyField(_:)`` masks.
    func formPairs(_ text: String, names: Set<String>? = nil) -> [(name: String, value: String)] {
        let masks = masking(names)
        return text.split(separator: "&").map { pair in
            let name = Self.formDecoded(pair.prefix { $0 != "=" })
            let value = pair.firstIndex(of: "=").map { Self.formDecoded(pair[pair.index(after: $0)...]) } ?? ""
            return (name, masks(name) ? Self.placeholder : value)
        }
    }

    /// Whether a field name is masked, given the names a caller passed.
    private func masking(_ names: Set<String>?) -> (String) -> Bool {
        guard let names else { return { queryItems.contains($0) } }
        if names == bodyFieldNames, !jsonFields.isEmpty { return { masksBodyField($0) } }
        return { names.contains($0) }
    }

    /// Form-encoded text with the values of `names` (default the query items) replaced and
    /// everything else left as it was sent; the values masked, as sent and decoded, are added to `masked`.
    func formEncoded(_ text: String, masked: inout [String], names: Set<String>? = nil) -> String {
        guard !(names ?? queryItems).isEmpty else { return text }
        let masks = masking(names)
        return text.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            let name = pair.prefix { $0 != "=" }
            guard masks(Self.formDecoded(name)), name.count < pair.count else { return String(pair) }
            let value = pair.dropFirst(name.count + 1)
            masked += [String(value), Self.formDecoded(value)]
            return "\(name)=\(Self.placeholder)"
        }.joined(separator: "&")
    }

    /// Form-encoded text with masked values replaced.
    func formEncoded(_ text: String) -> String {
        var masked: [String] = []
        return formEncoded(text, masked: &masked)
    }

    /// A body with masked values replaced: JSON fields in JSON, query items and JSON fields in
    /// form-encoded text and in the parts of a `multipart/form-data` body;
    /// the values masked are added to `masked`, so they can be looked for elsewhere — a server
    /// echoing the request quotes them where no field name says so. `nil` when the body holds
    /// JSON that cannot be parsed and names a masked field: it cannot be recorded safely.
    func body(_ data: Data, mimeType: String, masked: inout [String]) -> Data? {
        let type = mimeType.lowercased()
        if !bodyFieldNames.isEmpty, let boundary = Self.multipartBoundary(of: mimeType) {
            return multipartBody(data, boundary: boundary, masked: &masked)
        }
        if type.contains("x-www-form-urlencoded"), !bodyFieldNames.isEmpty,
            let text = String(data: data, encoding: .utf8)
        {
            return Data(formEncoded(text, masked: &masked, names: bodyFieldNames).utf8)
        }
        guard !jsonFields.isEmpty, type.contains("json") || Self.looksLikeJSON(data) else { return data }
        guard let object = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) else {
            // Truncated or malformed: masking cannot find the values, so only a body that names
            // no masked field is safe to keep.
            let text = String(decoding: data, as: UTF8.self)
            return jsonFields.contains { text.contains("\"\($0)\"") } ? nil : data
        }
        var didMask = false
        let redacted = redactedJSON(object, masked: &masked, didMask: &didMask)
        // Re-serializing changes spacing and key order: only a body that had something masked pays that.
        guard didMask else { return data }
        return try? JSONSerialization.data(
            withJSONObject: redacted, options: [.sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes])
    }

    private func redactedJSON(_ value: Any, masked: inout [String], didMask: inout Bool) -> Any {
        switch value {
        case let object as [String: Any]:
            var result: [String: Any] = [:]
            for (key, field) in object {
                if jsonFields.contains(key) {
                    didMask = true
                    Self.collectScalars(field, into: &masked)
                    result[key] = Self.placeholder
                } else {
                    result[key] = redactedJSON(field, masked: &masked, didMask: &didMask)
                }
            }
            return result
        case let array as [Any]:
            return array.map { redactedJSON($0, masked: &masked, didMask: &didMask) }
        default:
            return value
        }
    }

    private static func collectScalars(_ value: Any, into masked: inout [String]) {
        switch value {
        case let object as [String: Any]: object.values.forEach { collectScalars($0, into: &masked) }
        case let array as [Any]: array.forEach { collectScalars($0, into: &masked) }
        case let text as String: masked.append(text)
        case is NSNull: break
        default: masked.append("\(value)")
        }
    }

    private static func looksLikeJSON(_ data: Data) -> Bool {
        guard let first = data.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) else { return false }
        return first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
    }

    /// Form-decoded text: `+` is a space and `%XX` a byte; a `%` not followed by two hex digits
    /// stays as it is. By hand: Foundation's string edits cost microseconds each.
    private static func formDecoded(_ text: Substring) -> String {
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "%") }) else {
            return String(text)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var rest = text.utf8[...]
        while let byte = rest.popFirst() {
            switch byte {
            case UInt8(ascii: "+"):
                bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                let digits = rest.prefix(2)
                if digits.count == 2, let high = digits.first?.hexDigitValue, let low = digits.last?.hexDigitValue {
                    bytes.append(high << 4 | low)
                    rest = rest.dropFirst(2)
                } else {
                    bytes.append(byte)
                }
            default:
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
