extension String {
    /// Whether the two are equal ignoring ASCII case, as header field names compare; without
    /// Foundation's locale-aware comparison, which costs microseconds per call on Linux.
    func equalsIgnoringASCIICase(_ other: String) -> Bool {
        utf8.count == other.utf8.count && zip(utf8, other.utf8).allSatisfy { $0.asciiLowercased == $1.asciiLowercased }
    }

    /// The string with `A`–`Z` mapped to `a`–`z`, written straight into the new string: a header
    /// name's key, made for every field of every response.
    var asciiLowercased: String {
        String(unsafeUninitializedCapacity: utf8.count) { buffer in
            buffer.initialize(fromContentsOf: utf8.lazy.map(\.asciiLowercased))
        }
    }
}

extension UInt8 {
    /// The byte with `A`–`Z` mapped to `a`–`z`.
    var asciiLowercased: UInt8 {
        (0x41...0x5A).contains(self) ? self | 0x20 : self
    }
}
