/// SHA-1 (FIPS 180-4), for the one place a protocol still requires it: WebSocket's
/// `Sec-WebSocket-Accept` (RFC 6455 §4.2.2). Not for anything that needs security.
package enum SHA1 {
    /// The 20-byte digest of `message`.
    package static func digest(_ message: some Collection<UInt8>) -> [UInt8] {
        var state: [UInt32] = [0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0]
        var padded = Array(message)
        let bitLength = UInt64(padded.count) * 8
        padded.append(0x80)
        while padded.count % 64 != 56 { padded.append(0) }
        padded += (0..<8).reversed().map { UInt8(truncatingIfNeeded: bitLength >> ($0 * 8)) }
        var words = [UInt32](repeating: 0, count: 80)
        for block in stride(from: 0, to: padded.count, by: 64) {
            for index in 0..<16 {
                words[index] = (0..<4).reduce(0) { $0 << 8 | UInt32(padded[block + index * 4 + $1]) }
            }
            for index in 16..<80 {
                words[index] = rotated(words[index - 3] ^ words[index - 8] ^ words[index - 14] ^ words[index - 16], 1)
            }
            var (a, b, c, d, e) = (state[0], state[1], state[2], state[3], state[4])
            for index in 0..<80 {
                let (mixed, constant): (UInt32, UInt32) =
                    switch index {
                    case ..<20: ((b & c) | (~b & d), 0x5A82_7999)
                    case ..<40: (b ^ c ^ d, 0x6ED9_EBA1)
                    case ..<60: ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC)
                    default: (b ^ c ^ d, 0xCA62_C1D6)
                    }
                let next = rotated(a, 5) &+ mixed &+ e &+ constant &+ words[index]
                (a, b, c, d, e) = (next, a, rotated(b, 30), c, d)
            }
            for (index, value) in [a, b, c, d, e].enumerated() { state[index] &+= value }
        }
        return state.flatMap { word in (0..<4).reversed().map { UInt8(truncatingIfNeeded: word >> ($0 * 8)) } }
    }

    private static func rotated(_ value: UInt32, _ count: UInt32) -> UInt32 {
        value << count | value >> (32 - count)
    }
}
