import CErrandCurl
import Foundation

/// One libcurl multi handle and the thread that runs it; other threads talk to it only through
/// commands, which wake the thread through its ``CurlSocketWatch``, or with `curl_multi_wakeup`
/// where there is none.
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
        /// Open a connection for a WebSocket.
        case openSocket(CurlSocket.Opening)
        /// Send bytes on an open socket; the completion says when libcurl took them, or why not.
        case write(id: Int, Data, completion: @Sendable (ErrandError?) -> Void)
        /// End a socket once what was written before went out and the peer closed, or after
        /// the seconds given, completing it with the error.
        case drop(id: Int, ErrandError?, within: TimeInterval)
        /// No more requests will come: end the thread once none runs.
        case shutdown
    }

    /// The multi handle's address: `curl_multi_wakeup` is the one multi call libcurl allows from
    /// any thread, and the handle lives as long as this object.
    private let multiAddress: Int
    /// The loop's socket watch, whose wake-up reaches the thread whether it waits in libcurl's
    /// poll or on the watch alone.
    private let socketWatch: CurlSocketWatch?
    private let inbox = Locked(Inbox())
    private let nextID = Locked(0)
    /// Requests sent and not completed: the thread outlives the transport until they end.
    private let requestsInFlight = Locked(0)

    /// The commands waiting, and whether the thread sleeps in its poll: only then does
    /// a command need the system call that wakes it, which at one request in flight cost more
    /// than the rest of starting the request.
    private struct Inbox {
        var commands: [Command] = []
        /// Set by the thread just before it polls, with no command waiting.
        var isAsleep = false
        /// A command already woke the sleeping thread; the next need not again.
        var isWaking = false
        /// ``Command/shutdown`` was submitted: the last request to end must wake the thread.
        var isShuttingDown = false
    }

    /// Creates the multi handle and starts its thread; `nil` when libcurl is not available.
    /// `watchesSockets: false` keeps to `curl_multi_perform` and `curl_multi_poll` where epoll
    /// exists, so that tests reach the loop other platforms run.
    init?(connection: CurlConnectionSettings, calls: CurlCalls, watchesSockets: Bool = true) {
        guard CurlLibrary.isLoaded, let multi = errand_curl_multi_init() else { return nil }
        _ = errand_curl_multi_setopt_long(
            multi, ERRAND_CURLMOPT_MAX_HOST_CONNECTIONS, connection.maximumConnectionsPerHost)
        // libcurl otherwise keeps at most 4 idle connections per transfer in flight, so a pool of 6 per
        // host shrank whenever the requests paused, and the next burst opened new ones.
        _ = errand_curl_multi_setopt_long(
            multi, ERRAND_CURLMOPT_MAXCONNECTS, CurlPoolLimits.pooledHosts * connection.maximumConnectionsPerHost)
        // HTTP/2 requests to one host share its connection (libcurl's default since 7.62; said for older ones).
        _ = errand_curl_multi_setopt_long(multi, ERRAND_CURLMOPT_PIPELINING, Int(ERRAND_CURLPIPE_MULTIPLEX))
        multiAddress = Int(bitPattern: multi)
        let socketWatch = watchesSockets ? CurlSocketWatch(multi: multi) : nil
        self.socketWatch = socketWatch
        let thread = Thread { [self] in
            Thread.current.threadDictionary[Self.threadMarker] = true
            guard let multi = UnsafeMutableRawPointer(bitPattern: multiAddress) else { return }
            CurlLoop(
                driver: self, multi: multi, connection: connection, calls: calls,
                socketWatch: socketWatch
            ).run()
        }
        thread.name = "Errand.CurlTransport"
        thread.start()
    }

    /// Whether the calling thread is a curl thread, which must never run a request's own code.
    /// Not by name: on Linux, Foundation often fails to apply a name given before the thread starts.
    static var isCurrentThread: Bool { Thread.current.threadDictionary[threadMarker] != nil }
    private static let threadMarker = "Errand.CurlTransport"

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

    /// A request completed; once shutdown was asked for, the last one wakes the thread, which
    /// waits for it to end.
    func requestEnded() {
        let remaining = requestsInFlight.withLock { count in
            count -= 1
            return count
        }
        if remaining == 0, inbox[\.isShuttingDown] { wake() }
    }

    /// Whether any request is between ``requestStarted()`` and ``requestEnded()``.
    var hasRequestsInFlight: Bool { requestsInFlight[\.self] > 0 }

    /// Queues `command`, waking the curl thread if it sleeps.
    func submit(_ command: Command) {
        submit([command])
    }

    /// Queues `commands` together: the curl thread takes them in one turn, in order.
    func submit(_ commands: [Command]) {
        let wakes = inbox.withLock { inbox -> Bool in
            inbox.commands += commands
            if commands.contains(where: { if case .shutdown = $0 { true } else { false } }) {
                inbox.isShuttingDown = true
            }
            guard inbox.isAsleep, !inbox.isWaking else { return false }
            inbox.isWaking = true
            return true
        }
        if wakes { wake() }
    }

    /// The commands queued since the last call, oldest first.
    func takeCommands() -> [Command] {
        inbox.withLock { inbox in
            defer { inbox.commands = [] }
            return inbox.commands
        }
    }

    /// On the curl thread, before it polls: `true` when no command waits, and it may sleep —
    /// a command submitted from now on wakes it; `false` when it should look again at once.
    func prepareToSleep() -> Bool {
        inbox.withLock { inbox in
            inbox.isAsleep = inbox.commands.isEmpty
            return inbox.isAsleep
        }
    }

    /// On the curl thread, after it polled.
    func awoke() {
        inbox.withLock { inbox in
            inbox.isAsleep = false
            inbox.isWaking = false
        }
    }

    private func wake() {
        if let socketWatch { return socketWatch.wake() }
        if let multi = UnsafeMutableRawPointer(bitPattern: multiAddress) { _ = errand_curl_multi_wakeup(multi) }
    }
}
