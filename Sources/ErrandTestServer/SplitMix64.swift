/// A tiny seeded generator so `/bytes/{n}?seed=` returns the same bytes every time.
struct SplitMix64: RandomNumberGenerator {
    private static let increment: UInt64 = 0x9E37_79B9_7F4A_7C15
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= Self.increment
        return Self.mix(state)
    }

    /// The `index`-th value (from 0) a generator seeded with `seed` returns, without generating
    /// the ones before it: any byte range of `/download` content can be computed directly.
    static func value(seed: UInt64, index: UInt64) -> UInt64 {
        mix(seed &+ (index &+ 1) &* increment)
    }

    private static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
