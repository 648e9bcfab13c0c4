import Errand
import ErrandTestServer
import Foundation

/// The requests of the soak's mix, each a ``SoakExchange`` so that the ledger holds its
/// accessories to their calls.
enum SoakRequests {
    /// `GET /get?w=W&i=I`: httpbin's echo, checked for its arguments.
    struct Get: SoakExchange {
        let worker: Int
        let index: Int
        var url: String { "/get" }
        var arguments: [String: any Sendable]? { ["w": worker, "i": index] }
        var timeoutInterval: TimeInterval { 20 }
        var jsonValidator: JSONValidator? { ["args": ["w": .string, "i": .string]] }
    }

    /// `POST /post` with a JSON body, checked in the echo.
    struct Post: SoakExchange {
        let worker: Int
        let index: Int
        var url: String { "/post" }
        var method: HTTPMethod { .post }
        var requestSerializerType: RequestSerializerType { .json }
        var arguments: [String: any Sendable]? {
            ["w": worker, "i": index, "pad": String(repeating: "p", count: 64 + index % 2048)]
        }
        var timeoutInterval: TimeInterval { 20 }
    }

    /// A resource cached as the server says (`max-age=5`, an `ETag`: revalidated after).
    struct HTTPCached: SoakExchange {
        let index: Int
        var url: String { "/http-cache/\(SoakResource.httpCached(index))" }
        var followsHTTPCaching: Bool { true }
        var responseSerializerType: ResponseSerializerType { .string }
        var timeoutInterval: TimeInterval { 20 }
    }

    /// A resource cached for 10 s by the app's `cacheTimeInSeconds`.
    struct AppCached: SoakExchange {
        let index: Int
        var url: String { "/http-cache/\(SoakResource.appCached(index))" }
        var cacheTimeInSeconds: Int { 10 }
        var responseSerializerType: ResponseSerializerType { .string }
        var timeoutInterval: TimeInterval { 20 }
    }

    /// `/download/N` read into memory.
    struct Bytes: SoakExchange {
        let size: Int
        var url: String { "/download/\(size)" }
        var responseSerializerType: ResponseSerializerType { .data }
        var timeoutInterval: TimeInterval { 30 }
    }

    /// `/download/N` into a file, resumed after a failure.
    struct Download: SoakExchange {
        let size: Int
        let path: String
        var url: String { "/download/\(size)" }
        var resumableDownloadPath: String? { path }
        // Each wait for data: capped connections move a few MiB in a minute at worst.
        var timeoutInterval: TimeInterval { 30 }
    }

    /// The sizes read whole, and those downloaded to files.
    static let byteSizes = [4096, 65536]
    static let downloadSizes = [256 << 10, 1 << 20, 3 << 20]

    /// What `/download/N` serves, computed here, to check every byte.
    static let expected: [Int: Data] = Dictionary(
        uniqueKeysWithValues: (byteSizes + downloadSizes).map {
            ($0, TestServer.downloadContent(size: $0, version: 1, range: 0..<$0))
        })
}
