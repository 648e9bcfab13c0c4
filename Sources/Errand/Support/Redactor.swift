import Foundation

/// Hides credentials in what Errand prints: debug log lines and task descriptions.
enum Redactor {
    static let placeholder = "<redacted>"

    /// Parts of header and argument names that mark a secret, lowercase ASCII.
    private static let sensitiveNameParts = [
        "token", "password", "passwd", "pwd", "secret", "auth", "cookie", "apikey", "api_key", "api-key",
        "session", "signature", "credential", "private",
    ].map { Array($0.utf8) }

    /// Whether `name`, any case, contains a part that marks a secret. Asked of every header field
    /// of every request: an ASCII name, as every header field's is, is searched as bytes, with no
    /// string made; any other is lowercased by Unicode's rules first, so that a letter such as the
    /// Kelvin sign, which lowercases to `k`, still spells `token`.
    static func isSensitive(_ name: String) -> Bool {
        let search = { (bytes: UnsafeBufferPointer<UInt8>) -> Bool in
            guard bytes.allSatisfy({ $0 < 0x80 }) else {
                let lowered = Array(name.lowercased().utf8)
                return lowered.withUnsafeBufferPointer { lowered in
                    sensitiveNameParts.contains { contains($0, in: lowered, ignoringASCIICase: false) }
                }
            }
            return sensitiveNameParts.contains { contains($0, in: bytes, ignoringASCIICase: true) }
        }
        return name.utf8.withContiguousStorageIfAvailable(search) ?? Array(name.utf8).withUnsafeBufferPointer(search)
    }

    /// Whether `part` occurs in `bytes`; `ignoringASCIICase`, `A`–`Z` there match `a`–`z` in `part`.
    private static func contains(
        _ part: [UInt8], in bytes: UnsafeBufferPointer<UInt8>, ignoringASCIICase: Bool
    ) -> Bool {
        guard part.count <= bytes.count else { return false }
        return (0...(bytes.count - part.count)).contains { start in
            part.indices.allSatisfy { offset in
                let byte = bytes[start + offset]
                return (ignoringASCIICase ? byte.asciiLowercased : byte) == part[offset]
            }
        }
    }

    /// The URL with its user information and sensitive query values replaced; for display only.
    /// The user goes too: a token is often the user alone (`https://<token>@host/`).
    static func url(_ url: URL) -> String {
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        if components?.user != nil || components?.password != nil {
            components?.user = "redacted"
            components?.password = nil
        }
        let text = components?.string ?? url.absoluteString
        guard let queryStart = text.firstIndex(of: "?") else { return text }
        let queryEnd = text[queryStart...].firstIndex(of: "#") ?? text.endIndex
        let query = text[text.index(after: queryStart)..<queryEnd]
        return text[...queryStart] + formEncoded(String(query)) + text[queryEnd...]
    }

    /// Header fields sorted by name, sensitive values replaced: those whose names mark a
    /// secret, and those `request` marks as credentials (what an `Authenticator` applied).
    static func headers(of request: TransportRequest) -> [(name: String, value: String)] {
        request.headers.sorted { $0.key.lowercased() < $1.key.lowercased() }
            .map { ($0.key, isSensitive($0.key) || request.isCredentialHeader($0.key) ? placeholder : $0.value) }
    }

    /// Form-encoded text (`a=1&token=x`) with sensitive values replaced.
    static func formEncoded(_ text: String) -> String {
        text.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            let name = pair.prefix { $0 != "=" }
            let decodedName = String(name).removingPercentEncoding ?? String(name)
            return isSensitive(decodedName) && name.count < pair.count ? "\(name)=\(placeholder)" : String(pair)
        }.joined(separator: "&")
    }

    /// A request body as printable text: JSON and form bodies with sensitive values replaced,
    /// `nil` for binary bodies.
    static func body(_ body: Data, contentType: String?) -> String? {
        let type = contentType?.lowercased() ?? ""
        if type.contains("json"),
            let object = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]),
            let redacted = try? JSONSerialization.data(
                withJSONObject: redactedJSON(object), options: [.sortedKeys, .fragmentsAllowed])
        {
            return String(decoding: redacted, as: UTF8.self)
        }
        guard let text = String(data: body, encoding: .utf8) else { return nil }
        return type.contains("x-www-form-urlencoded") ? formEncoded(text) : text
    }

    private static func redactedJSON(_ value: Any) -> Any {
        switch value {
        case let object as [String: Any]:
            return object.reduce(into: [String: Any]()) { result, pair in
                result[pair.key] = isSensitive(pair.key) ? placeholder : redactedJSON(pair.value)
            }
        case let array as [Any]:
            return array.map(redactedJSON)
        default:
            return value
        }
    }
}
