import ErrandTestServer
import Foundation

/// The resources `/http-cache/{name}` serves in the soak, whose bodies the client knows too, so
/// that every answer — from the network, a `304` or the cache — is checked byte for byte.
enum SoakResource {
    /// How many of each kind.
    static let count = 20

    /// Cached as the server says (`max-age=5`, an `ETag`): under `followsHTTPCaching`.
    static func httpCached(_ index: Int) -> String { "soak-http-\(index)" }
    /// With no caching fields: cached by the app's `cacheTimeInSeconds` alone.
    static func appCached(_ index: Int) -> String { "soak-app-\(index)" }

    static let all: [(String, CacheableResource)] = (0..<count).flatMap { index in
        [
            (
                httpCached(index),
                CacheableResource(
                    body: body(httpCached(index)), etag: "\"\(httpCached(index))-v1\"",
                    headers: ["Cache-Control": "max-age=5"])
            ),
            (appCached(index), CacheableResource(body: body(appCached(index)))),
        ]
    }

    /// The body of `name`: its name, then 1–20 KiB of text that depends on it.
    static func body(_ name: String) -> String {
        let size = 1024 * (1 + abs(name.hashValueStable) % 20)
        let line = "\(name) says the same thing every time. "
        return String(String(repeating: line, count: size / line.utf8.count + 1).prefix(size))
    }
}

extension String {
    /// A hash that is the same in every process (`hashValue` is seeded per process).
    var hashValueStable: Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return Int(truncatingIfNeeded: hash >> 1)
    }
}
