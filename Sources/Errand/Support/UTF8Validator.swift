/// Checks UTF-8 as it arrives in pieces, so that a text message split across frames fails at
/// the first bad byte rather than at its end (the WHATWG decoder's byte ranges).
struct UTF8Validator: Sendable {
    /// Continuation bytes the current character still needs.
    private var needed = 0
    /// The range the next continuation byte must fall in; narrower after E0, ED, F0 and F4.
    private var lower: UInt8 = 0x80
    private var upper: UInt8 = 0xBF

    /// Whether the bytes so far end at a character boundary.
    var isAtBoundary: Bool { needed == 0 }

    /// Reads `bytes`; `false` at the first byte that cannot continue valid UTF-8.
    mutating func consume(_ bytes: some Sequence<UInt8>) -> Bool {
        for byte in bytes {
            guard needed > 0 else {
                switch byte {
                case 0x00...0x7F: continue
                case 0xC2...0xDF: needed = 1
                case 0xE0...0xEF:
                    needed = 2
                    if byte == 0xE0 { lower = 0xA0 } else if byte == 0xED { upper = 0x9F }
                case 0xF0...0xF4:
                    needed = 3
                    if byte == 0xF0 { lower = 0x90 } else if byte == 0xF4 { upper = 0x8F }
                default: return false
                }
                continue
            }
            guard (lower...upper).contains(byte) else { return false }
            (lower, upper) = (0x80, 0xBF)
            needed -= 1
        }
        return true
    }
}
