extension UInt8 {
    /// Whether the byte is an RFC 9110 `tchar`, of which header field names, methods and
    /// directive names are made: a letter, a digit or one of ``!#$%&'*+-.^_`|~``.
    var isHTTPTokenCharacter: Bool {
        switch self {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "!#$%&'*+-.^_`|~".utf8.contains(self)
        }
    }
}
