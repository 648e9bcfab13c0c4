import Foundation

/// One fuzz target: a name and what it does with an input. A target checks its properties with
/// ``require(_:_:)``, which stops the process, so libFuzzer records the input as a crash.
struct FuzzTarget: Sendable {
    let name: String
    let run: @Sendable (Data) -> Void

    static let all: [FuzzTarget] = [
        FuzzTarget(name: "response-head", run: ResponseHeadTarget.run),
        FuzzTarget(name: "line-splitter", run: LineSplitterTarget.run),
        FuzzTarget(name: "sse", run: ServerSentEventsTarget.run),
        FuzzTarget(name: "json-syntax", run: JSONSyntaxTarget.run),
        FuzzTarget(name: "json-validator", run: JSONValidatorTarget.run),
        FuzzTarget(name: "content-range", run: DownloadTarget.run),
        FuzzTarget(name: "cache-entry", run: CacheEntryTarget.run),
        FuzzTarget(name: "har", run: HARTarget.run),
        FuzzTarget(name: "redaction", run: RedactionTarget.run),
        FuzzTarget(name: "url-builder", run: URLBuilderTarget.run),
        FuzzTarget(name: "multipart", run: MultipartTarget.run),
        FuzzTarget(name: "websocket", run: WebSocketTarget.run),
        FuzzTarget(name: "http-caching", run: HTTPCachingTarget.run),
        FuzzTarget(name: "websocket-handshake", run: WebSocketHandshakeTarget.run),
        FuzzTarget(name: "cache-matching", run: CacheMatchingTarget.run),
        FuzzTarget(name: "set-cookie", run: SetCookieTarget.run),
        FuzzTarget(name: "cookie-date", run: CookieDateTarget.run),
    ]

    static func named(_ name: String) -> FuzzTarget? {
        all.first { $0.name == name }
    }
}

/// Stops the process when a property does not hold.
func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    guard !condition else { return }
    fatalError("property violated: \(message())")
}

/// Reads structured values from a fuzz input, front to back; past its end every read is zero or empty.
struct FuzzInput {
    private let bytes: [UInt8]
    private var index = 0

    init(_ data: Data) {
        bytes = Array(data)
    }

    var isAtEnd: Bool { index >= bytes.count }

    mutating func byte() -> UInt8 {
        guard index < bytes.count else { return 0 }
        defer { index += 1 }
        return bytes[index]
    }

    mutating func bool() -> Bool { byte() & 1 == 1 }

    /// A number in `0..<bound`.
    mutating func int(below bound: Int) -> Int {
        bound <= 1 ? 0 : Int(UInt16(byte()) << 8 | UInt16(byte())) % bound
    }

    /// Up to `maximum` bytes, their count read first.
    mutating func bytes(upTo maximum: Int) -> [UInt8] {
        let count = min(Int(byte()) % (maximum + 1), bytes.count - min(index, bytes.count))
        defer { index += count }
        return Array(bytes[index..<index + count])
    }

    /// Up to `maximum` bytes, decoded as UTF-8 with invalid bytes as U+FFFD.
    mutating func string(upTo maximum: Int) -> String {
        String(decoding: bytes(upTo: maximum), as: UTF8.self)
    }

    /// Up to `maximum` characters, each chosen from `alphabet`.
    mutating func string(from alphabet: [String], upTo maximum: Int) -> String {
        let count = Int(byte()) % (maximum + 1)
        var result = ""
        for _ in 0..<count where !isAtEnd { result += alphabet[Int(byte()) % alphabet.count] }
        return result
    }

    /// Everything not read yet.
    mutating func rest() -> [UInt8] {
        defer { index = bytes.count }
        return index < bytes.count ? Array(bytes[index...]) : []
    }

    /// The rest, cut into chunks of sizes read from the front: for feeding a parser piece by piece.
    mutating func chunks() -> [[UInt8]] {
        let count = Int(byte()) % 8
        var sizes: [Int] = []
        for _ in 0..<count { sizes.append(Int(byte()) % 32) }
        let rest = self.rest()
        var chunks: [[UInt8]] = []
        var start = 0
        for size in sizes where start < rest.count {
            let end = min(start + size, rest.count)
            chunks.append(Array(rest[start..<end]))
            start = end
        }
        if start < rest.count || chunks.isEmpty { chunks.append(Array(rest[start...])) }
        return chunks
    }
}

/// Calls `body` with the bytes in a buffer of exactly their size, so AddressSanitizer sees any read past them.
func withExactBuffer<Result, Failure: Error>(
    _ bytes: [UInt8], _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
) throws(Failure) -> Result {
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 1)
    defer { buffer.deallocate() }
    buffer.copyBytes(from: bytes)
    return try body(UnsafeRawBufferPointer(buffer))
}
