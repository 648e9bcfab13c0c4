extension String {
    /// Whether the string holds a line break as `Character.isNewline` knows them (U+000A–U+000D,
    /// U+0085, U+2028, U+2029), found in its UTF-8 bytes rather than by walking its characters:
    /// a header field's name and value are checked for every request.
    var containsLineBreak: Bool {
        var bytes = utf8.makeIterator()
        while let byte = bytes.next() {
            switch byte {
            case 0x0A...0x0D: return true
            case 0xC2 where bytes.next() == 0x85: return true
            case 0xE2 where bytes.next() == 0x80:
                if let last = bytes.next(), last == 0xA8 || last == 0xA9 { return true }
            default: continue
            }
        }
        return false
    }
}
