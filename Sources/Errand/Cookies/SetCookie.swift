import Foundation

/// One `Set-Cookie` field read by RFC 6265bis §5.6: the name, the value and what its attributes
/// mean for storage — each the last of its kind that was valid, as §5.7 takes them.
///
/// A field is one cookie: commas are never separators (an `Expires` date has one).
struct SetCookie: Sendable, Equatable {
    /// The most seconds a cookie may live: 400 days (§5.5, `cookie-age-limit`).
    static let ageLimit: TimeInterval = 400 * 86_400
    /// The most bytes of name and value together (§5.6, step 5).
    static let nameAndValueLimit = 4096
    /// The most bytes of an attribute's value; a longer one is ignored (§5.6).
    static let attributeValueLimit = 1024

    var name: String
    var value: String
    /// From the last `Max-Age`, else the last `Expires`; `nil` for a session cookie.
    var expiresAt: Date?
    /// The last `Domain` (lowercased, its leading dot gone); `nil` when none.
    var domain: String?
    /// The last `Path`, or the request's default path for one that is empty or relative; `nil` when none.
    var path: String?
    var isSecure = false
    var isHTTPOnly = false
    var sameSite = Cookie.SameSite.default

    /// Reads `field`, received for a request to `requestPath` at `now`; `nil` when §5.6 ignores it.
    init?(_ field: String, requestPath: String, now: Date) {
        let bytes = Array(field.utf8)
        // Step 1: a control character other than HTAB makes the whole field void.
        guard !bytes.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) else { return nil }
        var parts = bytes.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: false)[...]
        guard let pair = parts.popFirst() else { return nil }
        // A cookie needs a name, as RFC 6265 §5.2 has it and curl, Go, Python and OkHttp keep it;
        // the draft makes `token` and `=token` nameless cookies, as browsers do, which a server
        // that meant them for a browser never expects an API client to send back.
        guard let equals = pair.firstIndex(of: UInt8(ascii: "=")) else { return nil }
        let nameAndValue = (name: Self.trimmed(pair[..<equals]), value: Self.trimmed(pair[(equals + 1)...]))
        guard !nameAndValue.name.isEmpty, nameAndValue.name.count + nameAndValue.value.count <= Self.nameAndValueLimit
        else { return nil }
        name = String(decoding: nameAndValue.name, as: UTF8.self)
        value = String(decoding: nameAndValue.value, as: UTF8.self)
        var maxAge: Date?
        var expires: Date?
        for attribute in parts {
            let name: ArraySlice<UInt8>, value: ArraySlice<UInt8>
            if let equals = attribute.firstIndex(of: UInt8(ascii: "=")) {
                (name, value) = (Self.trimmed(attribute[..<equals]), Self.trimmed(attribute[(equals + 1)...]))
            } else {
                (name, value) = (Self.trimmed(attribute), [])
            }
            guard value.count <= Self.attributeValueLimit else { continue }
            switch Self.lowercased(name) {
            case "expires":
                if let date = CookieDate.parse(Substring(decoding: value, as: UTF8.self)) {
                    expires = min(date, now.addingTimeInterval(Self.ageLimit))
                }
            case "max-age":
                if let age = Self.maxAge(value, now: now) { maxAge = age }
            case "domain":
                // An empty value is undefined; §5.6.3 advises ignoring it, which leaves the cookie host-only.
                guard !value.isEmpty else { continue }
                let domain = value.first == UInt8(ascii: ".") ? value.dropFirst() : value
                self.domain = Self.lowercased(domain)
            case "path":
                path =
                    value.first == UInt8(ascii: "/")
                    ? String(decoding: value, as: UTF8.self)
                    : String(Self.defaultPath(of: requestPath))
            case "secure":
                isSecure = true
            case "httponly":
                isHTTPOnly = true
            case "samesite":
                sameSite = Cookie.SameSite(rawValue: Self.lowercased(value)) ?? .default
            default:
                continue
            }
        }
        expiresAt = maxAge ?? expires
    }

    /// The `Set-Cookie` fields URLSession joined with commas into one value: split at each comma
    /// that a cookie's `name=` follows, which an `Expires` date's comma never is. A value with a
    /// comma followed by `name=` inside it is split too; libcurl, which keeps fields apart, has no
    /// such limit.
    static func fields(joinedBySession joined: String) -> [String] {
        let bytes = Array(joined.utf8)
        var fields: [String] = []
        var start = 0
        for index in bytes.indices where bytes[index] == UInt8(ascii: ",") && startsCookie(bytes[(index + 1)...]) {
            fields.append(String(decoding: bytes[start..<index], as: UTF8.self))
            start = index + 1
        }
        fields.append(String(decoding: bytes[start...], as: UTF8.self))
        return fields.map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// Whether `rest` begins, after spaces, with a name without spaces and then `=`. Looks no
    /// further than the name's end — at the latest the next comma — so that splitting a field is
    /// linear in its length, however many commas without an `=` after them a server sends.
    private static func startsCookie(_ rest: ArraySlice<UInt8>) -> Bool {
        let name = rest.drop { $0 == 0x20 || $0 == 0x09 }
        guard
            let end = name.firstIndex(where: {
                $0 == UInt8(ascii: "=") || $0 == 0x20 || $0 == 0x09 || $0 == UInt8(ascii: ";")
                    || $0 == UInt8(ascii: ",")
            })
        else { return false }
        return name[end] == UInt8(ascii: "=") && end > name.startIndex
    }

    /// §5.1.4's default path of a request to `path`: up to its last `/`, or `/`.
    static func defaultPath(of path: String) -> Substring {
        // Bytes: a combining mark after a `/` makes one character of the two.
        guard path.utf8.first == UInt8(ascii: "/"), let last = path.utf8.lastIndex(of: UInt8(ascii: "/")),
            last != path.startIndex
        else { return "/" }
        return path[..<last]
    }

    /// §5.6.2: a `Max-Age` of digits, perhaps after a `-`, as the date it ends; `nil` to ignore it.
    private static func maxAge(_ value: ArraySlice<UInt8>, now: Date) -> Date? {
        let digits = value.first == UInt8(ascii: "-") ? value.dropFirst() : value
        guard !digits.isEmpty, digits.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        // Zero, negative, or a run of digits past any limit: the limit caps what is not non-positive.
        if value.first == UInt8(ascii: "-") || digits.allSatisfy({ $0 == 0x30 }) { return .distantPast }
        let significant = digits.drop { $0 == 0x30 }
        guard significant.count <= 9, let seconds = Int(String(decoding: significant, as: UTF8.self)) else {
            return now.addingTimeInterval(ageLimit)
        }
        return now.addingTimeInterval(min(TimeInterval(seconds), ageLimit))
    }

    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) })
        else { return [] }
        return bytes[first...last]
    }

    /// ASCII letters lowercased; other bytes as they are.
    private static func lowercased(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: bytes.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
    }
}
