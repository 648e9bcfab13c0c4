import Foundation

/// The 64-bit FNV-1a hash: fast, dependency-free and stable across runs and platforms, which
/// `Hasher` is not. Used for cache file names and to detect corrupted cache bodies; not for security.
struct FNV1a {
    private(set) var value: UInt64

    /// `seed` replaces FNV's offset basis, so two seeds give two independent hashes of one input.
    init(seed: UInt64 = 0xcbf2_9ce4_8422_2325) {
        value = seed
    }

    mutating func update(_ bytes: some Sequence<UInt8>) {
        for byte in bytes {
            value = (value ^ UInt64(byte)) &* 0x100_0000_01b3
        }
    }

    mutating func update(_ data: Data) {
        data.withUnsafeBytes { update($0) }
    }

    /// Sixteen lowercase hex digits.
    var hex: String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    static func hex(of bytes: some Sequence<UInt8>, seed: UInt64 = 0xcbf2_9ce4_8422_2325) -> String {
        var hash = FNV1a(seed: seed)
        hash.update(bytes)
        return hash.hex
    }
}
