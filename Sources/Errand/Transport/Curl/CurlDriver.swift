import CErrandCurl
import Foundation

/// One libcurl multi handle and the thread that runs it; other threads talk to it only through
/// commands, which wake the thread with `curl_multi_wakeup`.
final class CurlDriver: Sendable {
    /// What other threads ask of the curl thread.
    enum Command: Sendable {
        /// Start a hop.
        case start(CurlHop)
        /// Drop the request, already completed as cancelled.
        case cancel(id: Int)
        /// The consumer caught up: continue the paused request.
        case resume(id: Int)
        /// A streamed body has bytes ready: continue sending the paused request.
        case resumeSending(id: Int)
        /// No more requests will come: end the thread once none runs.
        case shutdown
    }

    /// The multi handle's address: `curl_multi_wakeup` is the one multi call libcurl allows from
    /// any thread, and the handle lives as long as this object.
    private let multiAddress: Int
    private let commands = Locked([Command]())
    private let nextID = Locked(0)
    /// Requests sent and not completed: the thread outlives the transport until they end.
    private let requestsInFlight = Locked(0)

    /// The idle connections kept for reuse: this many hosts' full pools.
    private static let pooledHosts = 4

    /// Creates the multi handle and starts its thread; `nil` when libcurl is not available.
    init?(cookies: CurlCookies, connection: CurlConnectionSettings, calls: CurlCalls) {
        guard CurlLibrary.isLoaded, let multi = errand_curl_multi_init() else { return nil }
        _ = errand_curl_multi_setopt_long(
            multi, ERRAND_CURLMOPT_MAX_HOST_CONNECTIONS, connection.maximumConnectionsPerHost)
        // libcurl otherwise keeps at most 4 idle connections per transfer in flight, so a pool of 6 per
        // host shrank whenever the requests paused, and the next burst opened new ones.
        _ = errand_curl_multi_setopt_long(
            multi, ERRAND_CURLMOPT_MAXCONNECTS, Self.pooledHosts * connection.maximumConnectionsPerHost)
        // HTTP/2 requests to one host share its connection (libcurl's default since 7.62; said for older ones).
        _ = errand_curl_multi_setopt_long(multi, ERRAND_CURLMOPT_PIPELINING, Int(ERRAND_CURLPIPE_MULTIPLEX))
        multiAddress = Int(bitPattern: multi)
        let thread = Thread { [self] in
            guard let multi = UnsafeMutableRawPointer(bitPattern: multiAddress) else { return }
            CurlLoop(driver: self, multi: multi, cookies: cookies, connection: connection, calls: calls).run()
        }
        thread.name = "Errand.CurlTransport"
        thread.start()
    }

    deinit {
        // Only now is no thread left that could wake the handle.
        if let multi = UnsafeMutableRawPointer(bitPattern: multiAddress) { _ = errand_curl_multi_cleanup(multi) }
    }

    /// A number for a new request, unique within this driver.
    func makeID() -> Int {
        nextID.withLock { id in
            id += 1
            return id
        }
    }

    /// Counts a new request until ``requestEnded()``.
    func requestStarted() {
        requestsInFlight.withLock { $0 += 1 }
    }

    /// A request completed; the last one wakes the thread, which may be waiting to shut down.
    func requestEnded() {
        let remaining = requestsInFlight.withLock { count in
            count -= 1
            return count
        }
        if remaining == 0, let multi = UnsafeMutableRawPointer(bitPattern: multiAddress) {
            _ = errand_curl_multi_wakeup(multi)
        }
    }

    /// Whether any request is between ``requestStarted()`` and ``requestEnded()``.
    var hasRequestsInFlight: Bool { requestsInFlight[\.self] > 0 }

    /// Queues `command` and wakes the curl thread.
    func submit(_ command: Command) {
        commands.withLock { $0.append(command) }
        if let multi = UnsafeMutableRawPointer(bitPattern: multiAddress) { _ = errand_curl_multi_wakeup(multi) }
    }

    /// The commands queued since the last call, oldest first.
    func takeCommands() -> [Command] {
        commands.withLock { commands in
            defer { commands.removeAll(keepingCapacity: true) }
            return commands
        }
    }
}
