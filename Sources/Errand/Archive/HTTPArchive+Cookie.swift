import Foundation

extension HTTPArchive.Cookie {
    /// The cookies of a request's `Cookie` field, `name=value; name=value`; their values
    /// ``Redaction/placeholder`` when `masked`.
    static func cookies(ofCookieField field: String?, masked: Bool) -> [Self] {
        guard let field else { return [] }
        return field.splitScalars(";").compactMap { pair in
            let parts = pair.splitScalars("=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = parts[0].trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty else { return nil }
            let value = parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : ""
            return Self(name: name, value: masked ? Redaction.placeholder : value)
        }
    }

    /// The cookies of a `Set-Cookie` value, which holds several joined with ", " when the
    /// response set several — and an `Expires` date holds a comma too, so a piece starts a new
    /// cookie only when it begins with `name=`. Values are ``Redaction/placeholder`` when `masked`.
    static func cookies(ofSetCookieField field: String?, masked: Bool) -> [Self] {
        guard let field else { return [] }
        var definitions: [String] = []
        for piece in field.splitScalars(",", omittingEmptySubsequences: false) {
            let head = piece.splitScalars(";", maxSplits: 1, omittingEmptySubsequences: false)[0]
            let nameAndValue = head.splitScalars("=", maxSplits: 1, omittingEmptySubsequences: false)
            let startsCookie =
                nameAndValue.count == 2 && !nameAndValue[0].trimmingCharacters(in: .whitespaces).contains(" ")
            if startsCookie || definitions.isEmpty {
                definitions.append(String(piece))
            } else {
                definitions[definitions.count - 1] += "," + piece
            }
        }
        return definitions.compactMap { definition in
            let attributes = definition.splitScalars(";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let first = attributes.first?.splitScalars("=", maxSplits: 1, omittingEmptySubsequences: false),
                first.count == 2
            else { return nil }
            var cookie = Self(name: String(first[0]), value: masked ? Redaction.placeholder : String(first[1]))
            for attribute in attributes.dropFirst() {
                let parts = attribute.splitScalars("=", maxSplits: 1)
                let value = parts.count > 1 ? String(parts[1]) : nil
                switch parts.first?.lowercased() {
                case "path": cookie.path = value
                case "domain": cookie.domain = value
                case "httponly": cookie.httpOnly = true
                case "secure": cookie.secure = true
                default: break
                }
            }
            return cookie
        }
    }
}
