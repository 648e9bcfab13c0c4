/// The directives of a `Cache-Control` field value, of a request or a response (RFC 9111 §5.2),
/// read the way the RFC asks a cache to.
///
/// - Lists: commas with optional whitespace around them; empty members are skipped, and so are
///   malformed ones (`max-age =60`, `max-age= 60`, an unterminated quote) — each alone, the
///   rest of the field still counts. Several field lines arrive joined by commas and read alike.
/// - Names in any case; arguments as a token or a quoted string, which recipients must accept
///   for every directive (§5.2), unescaped. Commas inside quotes separate nothing.
/// - A directive named twice counts as it first appeared (§4.2.1).
package struct CacheControl: Equatable, Sendable {
    /// One directive: its name in lower case and its argument, if it had one.
    package struct Directive: Equatable, Sendable {
        package let name: String
        package let argument: String?
    }

    /// The well-formed directives, in order.
    package let directives: [Directive]

    /// The largest `delta-seconds` a cache needs to tell apart: larger values read as 2³¹ (§1.2.2).
    package static let maximumDeltaSeconds = 2_147_483_648

    /// The directives of `fieldValue`; none for `nil`.
    package init(_ fieldValue: String?) {
        var reader = Reader(Array((fieldValue ?? "").utf8))
        directives = reader.directives()
    }

    /// Whether `name` (lower case) is present, with or without an argument.
    func contains(_ name: String) -> Bool {
        directive(name) != nil
    }

    /// Whether `name` is present without an argument: `no-cache` as against `no-cache="Set-Cookie"`.
    func containsUnqualified(_ name: String) -> Bool {
        directive(name).map { $0.argument == nil } ?? false
    }

    /// The lower-case field names a qualified `no-cache="A, B"` or `private="A"` lists.
    func fieldNames(of name: String) -> Set<String> {
        Set((argument(of: name) ?? "").split(separator: ",").map { $0.trimmed.lowercased() }.filter { !$0.isEmpty })
    }

    /// The argument of `name`'s first occurrence; `nil` when it is absent or had none.
    func argument(of name: String) -> String? {
        directive(name)?.argument
    }

    /// The `delta-seconds` of `name` (`max-age`, `stale-if-error`, …): `nil` when absent. Present
    /// but without digits only — no argument, `-1`, `60.5`, `'60'` — it reads as `0`, for the RFC
    /// encourages a cache to treat invalid freshness information as stale (§4.2.1).
    package func seconds(_ name: String) -> Int? {
        guard let directive = directive(name) else { return nil }
        return directive.argument.flatMap(Self.deltaSeconds) ?? 0
    }

    /// A value of `1*DIGIT` (§1.2.2), leading zeros allowed, at most ``maximumDeltaSeconds``;
    /// `nil` for anything else.
    package static func deltaSeconds(_ text: some StringProtocol) -> Int? {
        guard !text.isEmpty else { return nil }
        var value = 0
        for byte in text.utf8 {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = Swift.min(value * 10 + Int(byte - UInt8(ascii: "0")), maximumDeltaSeconds)
        }
        return value
    }

    private func directive(_ name: String) -> Directive? {
        directives.first { $0.name == name }
    }

    /// Reads `#cache-directive` from the bytes of a field value.
    private struct Reader {
        private let bytes: [UInt8]
        private var index = 0

        init(_ bytes: [UInt8]) {
            self.bytes = bytes
        }

        mutating func directives() -> [Directive] {
            var directives: [Directive] = []
            while true {
                while index < bytes.count, Self.isSeparator(bytes[index]) { index += 1 }
                guard index < bytes.count else { return directives }
                if let directive = directive(), atMemberEnd() {
                    directives.append(directive)
                } else {
                    skipMember()
                }
            }
        }

        /// `token [ "=" ( token / quoted-string ) ]`
        private mutating func directive() -> Directive? {
            guard let name = token() else { return nil }
            guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else {
                return Directive(name: name.lowercased(), argument: nil)
            }
            index += 1
            guard let argument = index < bytes.count && bytes[index] == UInt8(ascii: "\"") ? quotedString() : token()
            else { return nil }
            return Directive(name: name.lowercased(), argument: argument)
        }

        /// Whether only whitespace stands between here and the next comma or the end.
        private mutating func atMemberEnd() -> Bool {
            while index < bytes.count, bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "\t") {
                index += 1
            }
            return index == bytes.count || bytes[index] == UInt8(ascii: ",")
        }

        /// Moves past a malformed member: to the next comma outside quotes, or the end.
        private mutating func skipMember() {
            var isQuoted = false
            while index < bytes.count {
                let byte = bytes[index]
                if isQuoted && byte == UInt8(ascii: "\\") {
                    index += 2
                    continue
                }
                if byte == UInt8(ascii: "\"") { isQuoted.toggle() }
                if byte == UInt8(ascii: ","), !isQuoted { return }
                index += 1
            }
        }

        private mutating func token() -> String? {
            let start = index
            while index < bytes.count, bytes[index].isHTTPTokenCharacter { index += 1 }
            return index > start ? String(decoding: bytes[start..<index], as: UTF8.self) : nil
        }

        /// `DQUOTE *( qdtext / quoted-pair ) DQUOTE`, unescaped; `nil` when it never ends.
        private mutating func quotedString() -> String? {
            var value: [UInt8] = []
            index += 1
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""): return String(decoding: value, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard index < bytes.count else { return nil }
                    value.append(bytes[index])
                    index += 1
                default: value.append(byte)
                }
            }
            return nil
        }

        private static func isSeparator(_ byte: UInt8) -> Bool {
            byte == UInt8(ascii: ",") || byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
        }
    }
}
