import Foundation

/// FNV-1a 64 over a byte stream, fed in pieces of any size: cheap enough to compare a large
/// download with ``TestServer/downloadContent(size:version:range:)`` chunk by chunk, and what
/// `/upload` reports for the body it received.
public struct Checksum: Sendable, Equatable {
    /// The hash of everything passed to `update` so far.
    public private(set) var value: UInt64 = 0xCBF2_9CE4_8422_2325

    /// The checksum of no bytes at all.
    public init() {}

    /// The checksum of `data` alone.
    public init(_ data: Data) {
        update(data)
    }

    /// Adds `data` after the bytes already hashed.
    public mutating func update(_ data: Data) {
        var hash = value
        data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            for byte in bytes {
                hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
            }
        }
        value = hash
    }

    /// `value` as 16 lower-case hex digits, as `/upload` writes it.
    public var hexDigits: String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
