import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What the accept loop, the connections and handlers share: the descriptors to shut down on
/// stop, the stop signal itself, and what tests set and inspect (download version, requests seen).
///
/// A descriptor is closed only while it is still registered here and only under the lock, so
/// `stop()` can never shut down a descriptor number the kernel has already handed to someone else.
final class ServerState: @unchecked Sendable {  // every `var` is read and written only while holding `condition`
    let listener: Int32
    let host: String
    let port: UInt16
    /// Tokens, captchas and call counts of the request-pipeline endpoints.
    let pipeline = PipelineState()
    /// Keys, cursor and events of the long-poll endpoints.
    let longPoll = LongPollState()
    /// The API key and completion count of `/v1/chat/completions`.
    let chat = ChatCompletionState()
    /// The resources of `/http-cache/{name}` and their answers.
    let httpCache = HTTPCacheState()
    /// How the last WebSocket flood went.
    let webSocketFlood = WebSocketFloodState()
    /// The close frames WebSocket clients sent.
    let webSocketCloses = WebSocketCloseLog()
    /// The counter of `/conformance/etag`.
    let conformanceETag = ConformanceETag()
    /// The upload resources of `/resumable/uploads/{id}`.
    let resumableUploads = ResumableUploadState()
    /// The folder of the http-state parser tests `/cookie-parser` serves; `nil`: it answers 404.
    let cookieParserTests: URL?

    private let condition = NSCondition()
    private var stopped = false
    private var listenerClosed = false
    /// Holds the port once the listener is closed, so that a stopped server refuses connections.
    private var placeholder: Int32?
    private var connections: Set<Int32> = []
    private var currentDownloadVersion = 1
    private var recorded: [RecordedRequest] = []

    /// Enough for any one test's requests, small enough that a benchmark's millions cost nothing.
    static let maxRecordedRequests = 1000

    init(listener: Int32, host: String, port: UInt16, cookieParserTests: URL? = nil) {
        self.listener = listener
        self.host = host
        self.port = port
        self.cookieParserTests = cookieParserTests
    }

    deinit {
        if let placeholder { close(placeholder) }
    }

    var isStopped: Bool {
        condition.lock()
        defer { condition.unlock() }
        return stopped
    }

    /// Adopts an accepted connection; `false` (and the descriptor closed) if the server is stopping.
    func register(connection fd: Int32) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !stopped else {
            close(fd)
            return false
        }
        connections.insert(fd)
        return true
    }

    /// Forgets and closes a connection; its thread calls this exactly once when it is done.
    func closeConnection(_ fd: Int32) {
        condition.lock()
        defer { condition.unlock() }
        if connections.remove(fd) != nil {
            close(fd)
        }
    }

    /// Marks the server stopped and wakes every blocked accept, read and sleep.
    /// Returns `false` when it was already stopped.
    func stop() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !stopped else { return false }
        stopped = true
        if !listenerClosed { Socket.shutdownBoth(listener) }
        for fd in connections { Socket.shutdownBoth(fd) }
        condition.broadcast()
        return true
    }

    /// Called by the accept loop as it exits; it owns the listener, so it closes it.
    func closeListener() {
        condition.lock()
        defer { condition.unlock() }
        if !listenerClosed {
            listenerClosed = true
            close(listener)
            placeholder = Socket.makePlaceholder(host: host, port: port)
        }
        condition.broadcast()
    }

    /// Waits until the accept loop has closed the listener, or `timeout` passes.
    func waitForListenerClosed(timeout: TimeInterval) {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !listenerClosed && condition.wait(until: deadline) {}
    }

    /// What `/download` serves now; changing it changes the bytes, `ETag` and `Last-Modified`.
    var downloadVersion: Int {
        get {
            condition.lock()
            defer { condition.unlock() }
            return currentDownloadVersion
        }
        set {
            condition.lock()
            defer { condition.unlock() }
            currentDownloadVersion = newValue
        }
    }

    func record(_ request: RecordedRequest) {
        condition.lock()
        defer { condition.unlock() }
        if recorded.count >= Self.maxRecordedRequests { recorded.removeFirst() }
        recorded.append(request)
    }

    /// The most recent requests, oldest first.
    var recordedRequests: [RecordedRequest] {
        condition.lock()
        defer { condition.unlock() }
        return recorded
    }

    /// Sleeps for `seconds`, at most a day, returning early if the server stops meanwhile.
    func sleep(seconds: TimeInterval) {
        // A deadline centuries away would overflow the nanoseconds NSCondition converts it to.
        let deadline = Date(timeIntervalSinceNow: min(max(seconds, 0), 86_400))
        condition.lock()
        defer { condition.unlock() }
        while !stopped && condition.wait(until: deadline) {}
    }
}
