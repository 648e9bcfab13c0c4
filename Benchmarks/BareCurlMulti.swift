import CErrandCurl
import Foundation

/// One libcurl multi handle keeping `inFlight` easy handles busy on the calling thread:
/// `curl_multi_perform`, then every finished transfer from `curl_multi_info_read` is checked,
/// timed and added again at once, then `curl_multi_poll` until the sockets have more.
///
/// Its multi options are those ``CurlTransport`` sets by default — 6 connections per host at
/// most, 24 kept, multiplexing allowed — so that against it the difference is Errand's own
/// work, not a different use of connections: at 16 in flight, 10 wait inside libcurl for a
/// free connection in both. Not `Sendable`: it lives and dies on the thread that made it.
final class BareCurlMulti {
    /// ``ConnectionOptions/maximumConnectionsPerHost``'s default, as ``CurlTransport`` applies it.
    private static let connectionsPerHost = 6
    /// The connections kept for reuse: ``CurlTransport`` keeps four hosts' worth.
    private static let connectionsKept = 4 * connectionsPerHost
    /// The longest one poll waits; libcurl's own timers cut it short.
    private static let pollMilliseconds: Int32 = 1000

    private let multi: UnsafeMutableRawPointer
    private let handles: [BareCurlHandle]
    private let indexByEasy: [UnsafeMutableRawPointer: Int]
    private let clock = ContinuousClock()
    /// When each handle's current transfer was added.
    private var started: [ContinuousClock.Instant]

    /// - Throws: ``BenchmarkError`` when libcurl cannot be loaded or gives no handle.
    init(url: String, inFlight: Int) throws(BenchmarkError) {
        var handles: [BareCurlHandle] = []
        for _ in 0..<max(1, inFlight) { handles.append(try BareCurlHandle(url: url)) }
        guard let multi = errand_curl_multi_init() else {
            throw BenchmarkError(description: "libcurl gave no multi handle for the bare-libcurl baseline")
        }
        _ = errand_curl_multi_setopt_long(multi, ERRAND_CURLMOPT_MAX_HOST_CONNECTIONS, Self.connectionsPerHost)
        _ = errand_curl_multi_setopt_long(multi, ERRAND_CURLMOPT_MAXCONNECTS, Self.connectionsKept)
        _ = errand_curl_multi_setopt_long(multi, ERRAND_CURLMOPT_PIPELINING, Int(ERRAND_CURLPIPE_MULTIPLEX))
        self.multi = multi
        self.handles = handles
        indexByEasy = Dictionary(uniqueKeysWithValues: handles.enumerated().map { ($1.easy, $0) })
        started = Array(repeating: clock.now, count: handles.count)
    }

    deinit {
        // Handles still added after a failure are detached by the cleanup; the easy handles go after.
        _ = errand_curl_multi_cleanup(multi)
    }

    /// Runs `total` requests, at most `inFlight` at once, and returns each one's latency from
    /// being added to being read as done.
    ///
    /// - Throws: ``BenchmarkError`` at the first request that fails or answers other than 200.
    func run(total: Int) throws(BenchmarkError) -> [Duration] {
        var latencies: [Duration] = []
        latencies.reserveCapacity(total)
        var launched = 0
        func launch(_ index: Int) throws(BenchmarkError) {
            let code = errand_curl_multi_add_handle(multi, handles[index].easy)
            guard code == ERRAND_CURLM_OK else {
                throw BenchmarkError(description: "curl_multi_add_handle failed: \(code)")
            }
            started[index] = clock.now
            launched += 1
        }
        for index in handles.indices where launched < total { try launch(index) }
        while latencies.count < total {
            var running: Int32 = 0
            let code = errand_curl_multi_perform(multi, &running)
            guard code == ERRAND_CURLM_OK else {
                throw BenchmarkError(description: "curl_multi_perform failed: \(code)")
            }
            var added = false
            var easy: UnsafeMutableRawPointer?
            var result: Int32 = 0
            while errand_curl_multi_next_done(multi, &easy, &result) == 1 {
                guard let easy, let index = indexByEasy[easy] else { continue }
                latencies.append(clock.now - started[index])
                _ = errand_curl_multi_remove_handle(multi, easy)
                if let failure = handles[index].failure(result: result) { throw BenchmarkError(description: failure) }
                if launched < total {
                    try launch(index)
                    added = true
                }
            }
            // A transfer just added starts in the next perform; waiting first would only add a poll.
            if !added && latencies.count < total { _ = errand_curl_multi_poll(multi, nil, 0, Self.pollMilliseconds) }
        }
        return latencies
    }
}
