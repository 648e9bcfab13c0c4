import CErrandCurl
import Foundation

/// One libcurl easy handle set up for `GET url` and nothing more — no header or progress
/// callbacks, no metrics, no copying of the body — for the bare-libcurl baselines.
///
/// Set once and reused for every request, so that libcurl keeps the connection it opened;
/// its options are the few ``CurlTransport`` also sets that shape the traffic (no signals,
/// `TCP_NODELAY`). Not `Sendable`: it lives and dies on the thread that made it.
final class BareCurlHandle {
    /// `CURLOPT_TIMEOUT_MS`, which CErrandCurl does not name: a long option, index 155.
    private static let timeoutOption: Int32 = 155
    /// A hung request fails the benchmark in seconds, as the other loopback clients' do.
    private static let timeoutMilliseconds = 10_000

    let easy: UnsafeMutableRawPointer
    /// Body bytes the write callback counted since the last ``failure(result:)``.
    private let received: UnsafeMutablePointer<Int>

    /// - Throws: ``BenchmarkError`` when libcurl cannot be loaded or gives no handle.
    init(url: String) throws(BenchmarkError) {
        guard errand_curl_load() == 1, let easy = errand_curl_easy_init() else {
            throw BenchmarkError(description: "libcurl is not available for the bare-libcurl baseline")
        }
        // A write to a connection the server closed must fail, not end the process.
        _ = signal(SIGPIPE, SIG_IGN)
        self.easy = easy
        received = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        received.initialize(to: 0)
        _ = errand_curl_easy_setopt_string(easy, ERRAND_CURLOPT_URL, url)
        _ = errand_curl_easy_setopt_long(easy, ERRAND_CURLOPT_NOSIGNAL, 1)
        _ = errand_curl_easy_setopt_long(easy, ERRAND_CURLOPT_TCP_NODELAY, 1)
        _ = errand_curl_easy_setopt_long(easy, Self.timeoutOption, Self.timeoutMilliseconds)
        _ = errand_curl_easy_setopt_pointer(easy, ERRAND_CURLOPT_WRITEDATA, received)
        // Counts the bytes and keeps none of them.
        _ = errand_curl_easy_setopt_data_callback(easy, ERRAND_CURLOPT_WRITEFUNCTION) { _, size, count, counter in
            counter?.assumingMemoryBound(to: Int.self).pointee += size * count
            return size * count
        }
    }

    deinit {
        errand_curl_easy_cleanup(easy)
        received.deinitialize(count: 1)
        received.deallocate()
    }

    /// Why the transfer that just ended with the `CURLcode` `result` failed, or `nil` when it
    /// answered 200 with a body; zeroes the byte count for the next one.
    func failure(result: Int32) -> String? {
        defer { received.pointee = 0 }
        guard result == ERRAND_CURLE_OK else {
            let reason = errand_curl_easy_strerror(result).map { String(cString: $0) } ?? "libcurl error \(result)"
            return "bare libcurl GET failed: \(reason)"
        }
        var status = 0
        _ = errand_curl_easy_getinfo_long(easy, ERRAND_CURLINFO_RESPONSE_CODE, &status)
        guard status == 200, received.pointee > 0 else {
            return "bare libcurl GET answered \(status) with \(received.pointee) bytes"
        }
        return nil
    }
}
