import CErrandCurl
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// libcurl, loaded at run time: Linux always has it, because FoundationNetworking links it.
enum CurlLibrary {
    /// Whether libcurl was found, has every function Errand uses, and initialised. Loaded on first use.
    static let isLoaded: Bool = {
        // A write to a connection the peer closed raises SIGPIPE, which ends the process by
        // default; libcurl cannot block it on every path (TLS libraries write too), so Errand ignores it.
        _ = signal(SIGPIPE, SIG_IGN)
        return errand_curl_load() == 1
    }()

    /// The library's version as `0xXXYYZZ` (major, minor, patch); `0` when it is not loaded.
    static var versionNumber: UInt32 { isLoaded ? errand_curl_version_number() : 0 }

    /// The content codings the loaded library decodes, lower-cased: what a response may be
    /// encoded with and still reach the caller decoded. Any other passes through as it came.
    static let decodedContentCodings: Set<String> = {
        let features = isLoaded ? errand_curl_features() : 0
        var codings: Set<String> = ["identity"]
        if features & ERRAND_CURL_VERSION_LIBZ != 0 { codings.formUnion(["gzip", "x-gzip", "deflate"]) }
        if features & ERRAND_CURL_VERSION_BROTLI != 0 { codings.insert("br") }
        if features & ERRAND_CURL_VERSION_ZSTD != 0 { codings.insert("zstd") }
        return codings
    }()

    /// libcurl's one-line description of a `CURLMcode`, the result of a multi-handle call.
    static func describeMulti(_ code: Int32) -> String {
        guard isLoaded, let text = errand_curl_multi_strerror(code) else { return "libcurl multi error \(code)" }
        return String(cString: text)
    }

    /// libcurl's one-line description of a `CURLcode`.
    static func describe(_ code: Int32) -> String {
        guard isLoaded, let text = errand_curl_easy_strerror(code) else { return "libcurl error \(code)" }
        return String(cString: text)
    }
}
