import Foundation

/// Wraps bytes in the gzip format (RFC 1952) with uncompressed ("stored") deflate blocks: a
/// valid gzip stream any decoder must accept, without a compression library.
enum GzipEncoder {
    static func encode(_ data: Data) -> Data {
        var output = Data([0x1F, 0x8B, 0x08, 0, 0, 0, 0, 0, 0, 0xFF])
        let bytes = [UInt8](data)
        var offset = 0
        repeat {
            let count = min(65_535, bytes.count - offset)
            let isLast = offset + count == bytes.count
            output.append(isLast ? 1 : 0)
            appendLittleEndian(UInt16(count), to: &output)
            appendLittleEndian(~UInt16(count), to: &output)
            output.append(contentsOf: bytes[offset..<offset + count])
            offset += count
        } while offset < bytes.count
        appendLittleEndian(crc32(bytes), to: &output)
        appendLittleEndian(UInt32(truncatingIfNeeded: bytes.count), to: &output)
        return output
    }

    private static func appendLittleEndian<Value: FixedWidthInteger>(_ value: Value, to data: inout Data) {
        withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) }
    }

    private static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 {
                crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1
            }
        }
        return ~crc
    }
}
