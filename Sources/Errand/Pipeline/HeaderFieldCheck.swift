/// The last stage before a transport: every header field of an attempt is one a server reads as
/// written, or the attempt fails naming it.
///
/// A value is trimmed of the whitespace around it (tab, line feed, carriage return, space), as
/// the Fetch standard normalizes values, so a token read from a file with its newline still
/// works. A line break left inside a value, a NUL, or a name that is not an HTTP token would end
/// the field and start another the caller never set, so such a request is refused: it is never
/// sent with the field dropped.
enum HeaderFieldCheck {
    /// `request` with its header values trimmed.
    /// - Throws: ``ErrandError/serialization(_:)`` naming the first field that cannot be sent.
    static func checked(_ request: TransportRequest) throws(ErrandError) -> TransportRequest {
        var checked = request
        for (name, value) in request.headers {
            guard isToken(name) else {
                throw refusal("a header field name must be an HTTP token, not \"\(printable(name))\"", request)
            }
            let trimmed = trimmedValue(value)
            guard !trimmed.containsLineBreak, !trimmed.utf8.contains(0) else {
                // The value is left out: it may be a credential.
                throw refusal("the value of the header field \(name) holds a line break or NUL", request)
            }
            if trimmed.utf8.count != value.utf8.count { checked.headers[name] = trimmed }
        }
        return checked
    }

    /// Whether `name` is a non-empty RFC 9110 token: visible ASCII but separators.
    static func isToken(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy(\.isHTTPTokenCharacter)
    }

    /// `value` without the HTTP whitespace at its ends.
    private static func trimmedValue(_ value: String) -> String {
        let isWhitespace = { (byte: UInt8) in byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x20 }
        let bytes = value.utf8
        guard let first = bytes.first, let last = bytes.last, isWhitespace(first) || isWhitespace(last) else {
            return value
        }
        guard let start = bytes.firstIndex(where: { !isWhitespace($0) }),
            let end = bytes.lastIndex(where: { !isWhitespace($0) })
        else { return "" }
        return String(value[start...end])
    }

    /// `text` with control characters shown as escapes, for an error message.
    private static func printable(_ text: String) -> String {
        text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? $0.escaped(asASCII: true) : String($0) }
            .joined()
    }

    private static func refusal(_ reason: String, _ request: TransportRequest) -> ErrandError {
        .serialization("\(reason); the request to \(request.url.absoluteString) was not sent")
    }
}
