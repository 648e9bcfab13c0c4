import Foundation

/// The fields of a request that draft-ietf-httpbis-resumable-upload reads, each parsed strictly
/// as the Structured Field item (RFC 9651) the draft asks for. A value that is not that item is
/// ignored, as the draft says ("Other values MUST cause the entire header field to be ignored"),
/// and so is a field sent twice, whose lines combine into a list.
struct ResumableUploadFields {
    /// `Upload-Complete`: `?1` or `?0`.
    var complete: Bool?
    /// `Upload-Offset`: a non-negative Integer.
    var offset: Int64?
    /// `Upload-Length`: a non-negative Integer.
    var length: Int64?
    /// How long the body is: `Content-Length`, 0 without a body, `nil` for a chunked one.
    var bodyLength: Int64?
    /// `Upload-Draft-Interop-Version`, an Integer.
    var interopVersion: Int64?
    /// Whether `Content-Type` is `application/partial-upload`, as an append must be.
    var isPartialUpload: Bool

    init(_ headers: [HTTPHeader]) {
        func item(_ name: String) -> Substring? {
            let values = headers.values(for: name)
            guard values.count == 1, let value = values.first else { return nil }
            return Self.trimmed(value[...])
        }
        complete = item("Upload-Complete").flatMap(Self.boolean)
        offset = item("Upload-Offset").flatMap(Self.integer)
        length = item("Upload-Length").flatMap(Self.integer)
        interopVersion = item("Upload-Draft-Interop-Version").flatMap(Self.integer)
        isPartialUpload =
            item("Content-Type").map {
                Self.trimmed($0.prefix { $0 != ";" }).lowercased() == "application/partial-upload"
            } ?? false
        bodyLength = Self.bodyLength(headers)
    }

    /// RFC 9651 §4.2.5, without parameters: exactly `?0` or `?1`.
    static func boolean(_ text: Substring) -> Bool? {
        switch text {
        case "?1": true
        case "?0": false
        default: nil
        }
    }

    /// RFC 9651 §4.2.4 for a non-negative Integer without parameters: 1 to 15 ASCII digits, so
    /// that any value fits an `Int64` and any two of them add without overflow.
    static func integer(_ text: Substring) -> Int64? {
        guard (1...15).contains(text.utf8.count), text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
            return nil
        }
        return Int64(text)
    }

    /// The body's length as its framing says. The parser has already refused a malformed or
    /// conflicting `Content-Length`, so here it is one repeated run of at most 18 digits.
    private static func bodyLength(_ headers: [HTTPHeader]) -> Int64? {
        guard headers.values(for: "Transfer-Encoding").isEmpty else { return nil }
        let lengths = headers.values(for: "Content-Length").joined(separator: ",").split(separator: ",")
        guard let first = lengths.first else { return 0 }
        return Int64(trimmed(first))
    }

    /// Without the spaces and tabs around it (RFC 9651 §4.2 discards leading and trailing SP).
    private static func trimmed(_ text: Substring) -> Substring {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let start = text.firstIndex(where: { !isBlank($0) }), let end = text.lastIndex(where: { !isBlank($0) })
        else { return "" }
        return text[start...end]
    }
}
