import CErrandCurl

/// The libcurl calls whose failure the curl thread acts on, as values: libcurl's own by default.
/// They fail only when libcurl runs out of memory or is misused, so tests pass failing ones to
/// check that such a failure ends the request at once instead of leaving it to a timeout.
struct CurlCalls: Sendable {
    /// `curl_multi_add_handle`: a `CURLMcode`.
    var addHandle: @Sendable (_ multi: UnsafeMutableRawPointer, _ easy: UnsafeMutableRawPointer) -> Int32
    /// `curl_easy_pause`: a `CURLcode`.
    var pause: @Sendable (_ easy: UnsafeMutableRawPointer, _ bitmask: Int32) -> Int32

    static let libcurl = CurlCalls(
        addHandle: { errand_curl_multi_add_handle($0, $1) }, pause: { errand_curl_easy_pause($0, $1) })
}
