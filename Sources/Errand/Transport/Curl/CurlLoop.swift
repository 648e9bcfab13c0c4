import CErrandCurl
import Dispatch
import Foundation

/// The curl thread's loop: runs the multi handle, starts, cancels and resumes transfers as
/// commanded, enforces timeouts, and reports each finished hop.
///
/// With a ``CurlSocketWatch`` (Linux) a turn costs what is ready, not what is open: the thread
/// waits on one epoll set holding libcurl's sockets and the WebSockets, acts on each ready one
/// alone, and looks only at the timeouts that are due. Elsewhere it runs `curl_multi_perform`
/// and `curl_multi_poll` over every transfer each turn.
final class CurlLoop {
    private let driver: CurlDriver
    let multi: UnsafeMutableRawPointer
    let connection: CurlConnectionSettings
    /// The trusted roots as libcurl reads them, from memory that lives as long as the loop.
    let certificateBundle: UnsafeMutableRawBufferPointer?
    private let calls: CurlCalls
    private let redirectPolicy = RedirectPolicy()
    private var transfers: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    private var handlesByID: [Int: UnsafeMutableRawPointer] = [:]
    /// Connections opened for WebSockets, by request and by easy handle.
    var sockets: [Int: CurlSocket] = [:]
    var socketsByHandle: [UnsafeMutableRawPointer: CurlSocket] = [:]
    /// The sockets libcurl is still connecting, by request.
    var connectingSockets: Set<Int> = []
    /// Watches libcurl's sockets and the WebSockets as one descriptor; `nil` where the platform
    /// cannot, when libcurl polls its own and each WebSocket goes to its poll.
    let socketWatch: CurlSocketWatch?
    /// Where the socket watch puts the tokens of what is ready, each turn.
    private var readyTokens = [UInt64](repeating: 0, count: CurlSocketWatch.batchSize)
    /// The WebSockets to pump this turn, and the batch being pumped: two buffers, kept.
    var pumpQueue: [CurlSocket] = []
    var pumping: [CurlSocket] = []
    /// When each request's timeouts are next looked at.
    var deadlines = CurlDeadlines()
    /// The connections libcurl may keep, following the transfers and sockets open.
    var poolLimits: CurlPoolLimits
    /// What every socket reads into, in turn.
    var socketBuffer = [UInt8](repeating: 0, count: CurlSocket.readSize)
    /// Reset easy handles to reuse: a new handle per request costs allocations and its caches.
    private var spareHandles: [UnsafeMutableRawPointer] = []
    private var isShuttingDown = false
    /// The deliveries this turn of the loop started, which begin when it ends.
    let drains = CurlDrainBatch()

    /// Spare handles kept; more are freed.
    private static let spareHandleLimit = 64
    /// The longest the thread sleeps without a timeout due.
    private static let maximumPollMilliseconds = 1000

    init(
        driver: CurlDriver, multi: UnsafeMutableRawPointer, connection: CurlConnectionSettings,
        calls: CurlCalls, socketWatch: CurlSocketWatch?
    ) {
        self.driver = driver
        self.socketWatch = socketWatch
        self.multi = multi
        self.connection = connection
        self.calls = calls
        poolLimits = CurlPoolLimits(connectionsPerHost: connection.maximumConnectionsPerHost)
        certificateBundle = connection.certificateBundle.map { bytes in
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 1)
            buffer.copyBytes(from: bytes)
            return buffer
        }
    }

    deinit {
        certificateBundle?.deallocate()
    }

    func run() {
        // A request between redirects has no transfer, but is still in flight.
        while !(isShuttingDown && transfers.isEmpty && sockets.isEmpty && !driver.hasRequestsInFlight) {
            driver.takeCommands().forEach(handle)
            driveLibcurl()
            pumpSockets()
            expireTimeouts()
            drains.start()
            // Asleep only with no command waiting: one submitted from now on wakes the poll.
            wait(milliseconds: driver.prepareToSleep() ? pollMilliseconds() : 0)
            driver.awoke()
        }
        spareHandles.forEach(errand_curl_easy_cleanup)
        spareHandles.removeAll()
    }

    /// Lets libcurl do what is due, and reports the transfers it finished. With the watch, its
    /// ready sockets were acted on as the wait found them: only its timeout is left.
    private func driveLibcurl() {
        var running: Int32 = 0
        if let socketWatch {
            if socketWatch.takeLibcurlTimeoutIfDue() {
                _ = errand_curl_multi_socket_action(multi, ERRAND_CURL_SOCKET_TIMEOUT, 0, &running)
            }
        } else if drivesLibcurl {
            _ = errand_curl_multi_perform(multi, &running)
        }
        collectFinished()
    }

    /// Waits up to `milliseconds` for libcurl's sockets, the WebSockets or a wake; hands libcurl
    /// its sockets that are ready and queues the WebSockets that are.
    private func wait(milliseconds: Int) {
        guard let socketWatch else { return poll(milliseconds: milliseconds) }
        for token in socketWatch.ready(waitingAtMost: Int32(milliseconds), into: &readyTokens) {
            switch CurlSocketWatch.Readiness(token) {
            case .libcurl(let descriptor, let events):
                socketWatch.libcurlSocketReady(multi, descriptor: descriptor, events: events)
            case .socket(let id):
                sockets[id].map(queuePump)
            }
        }
    }

    /// The wait without a watch: libcurl polls its sockets and, beside them, every WebSocket.
    private func poll(milliseconds: Int) {
        let polled = sockets.values.compactMap { socket in
            socket.pollEvents.map { (socket, errand_curl_waitfd(fd: socket.descriptor, events: $0, revents: 0)) }
        }
        var waits = polled.map(\.1)
        _ = errand_curl_multi_poll(multi, &waits, UInt32(waits.count), Int32(milliseconds))
        for (index, wait) in waits.enumerated() where wait.revents != 0 { queuePump(polled[index].0) }
    }

    /// Whether libcurl has anything to drive without the watch: a transfer, or a socket it is
    /// connecting. A connected socket's handle sits finished in the multi handle, yet every
    /// `curl_multi_perform` and `curl_multi_poll` walks all the handles it holds.
    private var drivesLibcurl: Bool { !transfers.isEmpty || !connectingSockets.isEmpty }

    private func handle(_ command: CurlDriver.Command) {
        switch command {
        case .start(let hop): start(hop)
        case .cancel(let id):
            transfer(id).map(remove)
            sockets[id].map { remove($0, failingWritesWith: .cancelled) }
        case .resume(let id):
            transfer(id).map(resume)
            sockets[id].map(queuePump)
        case .resumeSending(let id): transfer(id).map(resumeSending)
        case .openSocket(let opening): open(opening)
        case .write(let id, let bytes, let completion):
            guard let socket = sockets[id] else { return completion(.cancelled) }
            socket.write(bytes, completion: completion)
            queuePump(socket)
        case .drop(let id, let error, let grace):
            guard let socket = sockets[id] else { return }
            socket.end(afterWrites: error, within: grace)
            deadlines.schedule(id, at: socket.expiry)
            queuePump(socket)
        case .shutdown: isShuttingDown = true
        }
    }

    /// The running transfer of request `id`; `nil` between redirects and after it ended.
    private func transfer(_ id: Int) -> CurlTransfer? {
        handlesByID[id].flatMap { transfers[$0] }
    }

    private func start(_ hop: CurlHop) {
        // Cancelled while queued or between redirects.
        guard !hop.mailbox.isClosed, let easy = takeHandle(for: hop.request.url, hop.mailbox) else { return }
        let transfer: CurlTransfer
        do {
            transfer = try CurlTransfer(
                hop: hop, easy: easy, connection: connection,
                certificateBundle: certificateBundle.map(UnsafeRawBufferPointer.init), drains: drains)
        } catch {
            recycle(easy)
            hop.mailbox.close(with: error, batch: drains)
            return
        }
        poolLimits.transferStarted(hop.id, to: hop.request.url, isStreaming: hop.request.isStreaming)
        applyPoolLimits()
        guard add(easy, for: hop.request.url, hop.mailbox) else {
            poolLimits.transferEnded(hop.id, isStreaming: hop.request.isStreaming)
            return
        }
        transfers[easy] = transfer
        handlesByID[hop.id] = easy
        deadlines.schedule(hop.id, at: transfer.expiry)
    }

    /// A spare easy handle or a new one; `nil`, with `mailbox` closed, when libcurl has none.
    func takeHandle(for url: URL, _ mailbox: CurlEventMailbox) -> UnsafeMutableRawPointer? {
        if let easy = spareHandles.popLast() ?? errand_curl_easy_init() { return easy }
        mailbox.close(
            with: .transport(URLError(.unknown, userInfo: [NSURLErrorFailingURLErrorKey: url])), batch: drains)
        return nil
    }

    /// Adds `easy` to the multi handle; `false`, with the handle recycled and `mailbox` closed
    /// saying why, when libcurl refuses it.
    func add(_ easy: UnsafeMutableRawPointer, for url: URL, _ mailbox: CurlEventMailbox) -> Bool {
        socketWatch?.watchCloses(of: easy)
        let added = calls.addHandle(multi, easy)
        guard added != ERRAND_CURLM_OK else { return true }
        recycle(easy)
        let reason = "libcurl could not start the transfer: \(CurlLibrary.describeMulti(added))"
        mailbox.close(
            with: .transport(
                URLError(.unknown, userInfo: [NSURLErrorFailingURLErrorKey: url, NSLocalizedDescriptionKey: reason])),
            batch: drains)
        return false
    }

    /// Continues a transfer its consumer caught up with.
    private func resume(_ transfer: CurlTransfer) {
        guard transfer.consumerCaughtUp() else { return }
        unpause(transfer)
    }

    /// Continues sending a transfer whose streamed body has bytes ready again.
    private func resumeSending(_ transfer: CurlTransfer) {
        guard transfer.bodyReady() else { return }
        unpause(transfer)
    }

    /// Keeps paused only the directions still waiting; a transfer libcurl cannot continue ends
    /// now, for paused it has no timeout that would end it.
    private func unpause(_ transfer: CurlTransfer) {
        let result = calls.pause(transfer.easy, transfer.pauseMask)
        guard result != ERRAND_CURLE_OK else { return deadlines.schedule(transfer.hop.id, at: transfer.expiry) }
        remove(transfer)
        transfer.hop.mailbox.close(
            with: CurlErrorMapping.error(for: result, url: transfer.hop.request.url), batch: drains)
    }

    private func collectFinished() {
        var easy: UnsafeMutableRawPointer?
        var result: Int32 = 0
        while errand_curl_multi_next_done(multi, &easy, &result) == 1 {
            guard let easy else { continue }
            if let socket = socketsByHandle[easy] {
                connected(socket, result: result)
            } else if let transfer = transfers[easy] {
                finish(transfer, result: result)
            }
        }
    }

    private func finish(_ transfer: CurlTransfer, result: Int32) {
        let hop = transfer.hop
        if result == ERRAND_CURLE_OK, let redirect = transfer.redirect {
            remove(transfer)
            follow(redirect, from: hop)
            return
        }
        if transfer.canReplay(after: result) {
            remove(transfer)
            var replay = hop
            replay.isReplay = true
            start(replay)
            return
        }
        // Both read the handle, which removing it resets.
        let metrics = transfer.metrics()
        let failure = transfer.failure(for: result)
        let trailers = failure == nil ? transfer.trailers : [:]
        remove(transfer)
        if !trailers.isEmpty { hop.mailbox.post(.trailers(trailers), batch: drains) }
        hop.mailbox.post(.metrics(metrics), batch: drains)
        hop.mailbox.close(with: failure, batch: drains)
    }

    /// Works out the next hop off the curl thread: cookie storage may write to disk.
    private func follow(_ redirect: CurlTransfer.Redirect, from hop: CurlHop) {
        hop.mailbox.perform(batch: drains) { [driver, redirectPolicy] in
            hop.request.cookieJar?.storeCookies(fromSetCookieFields: redirect.setCookies, for: hop.request.url)
            let next = redirectPolicy.next(
                after: hop.request, statusCode: redirect.statusCode, location: redirect.location,
                redirectCount: hop.redirectCount)
            switch next {
            case .success(let request):
                if let refusal = hop.serverTrust.refusal(of: request.url, canCheckPins: true) {
                    hop.mailbox.close(with: refusal)
                    return
                }
                var nextHop = hop
                nextHop.request = request
                if request.bodyStream == nil, let pump = hop.bodyPump {
                    // The redirect turned the request into a GET: its producer need not go on.
                    pump.stop()
                    nextHop.bodyPump = nil
                }
                nextHop.cookieHeader = request.jarCookieHeader
                nextHop.redirectCount += 1
                driver.submit(.start(nextHop))
            case .failure(let error):
                hop.mailbox.close(with: error)
            }
        }
    }

    /// Ends the requests whose timeout passed, and schedules the next look at the others whose
    /// check came due: their activity moved it.
    private func expireTimeouts() {
        let now = DispatchTime.now()
        for id in deadlines.takeDue(at: now) {
            if let transfer = transfer(id) {
                guard let expiry = transfer.expiry, expiry <= now else {
                    deadlines.schedule(id, at: transfer.expiry)
                    continue
                }
                timeOut(transfer)
            } else if let socket = sockets[id] {
                guard let expiry = socket.expiry, expiry <= now else {
                    deadlines.schedule(id, at: socket.expiry)
                    continue
                }
                end(socket, with: socket.expiredError)
            }
        }
    }

    /// Ends `transfer` as timed out. One that never got to send while more requests to its host
    /// were in flight than it may have connections waited for one: its metrics say so, for the
    /// debug log, since the timeout alone would read as a silent server.
    private func timeOut(_ transfer: CurlTransfer) {
        let limit = connection.maximumConnectionsPerHost
        if !transfer.hasExchangedBytes, transfersToTheHost(of: transfer) > limit {
            var metrics = transfer.metrics()
            metrics.exhaustedConnectionLimit = limit
            transfer.hop.mailbox.post(.metrics(metrics), batch: drains)
        }
        remove(transfer)
        transfer.hop.mailbox.close(with: .timedOut, batch: drains)
    }

    /// The transfers running to `transfer`'s scheme, host and port, itself included: counted only
    /// when one times out, so that starting a request costs nothing for it.
    private func transfersToTheHost(of transfer: CurlTransfer) -> Int {
        let url = transfer.hop.request.url
        return transfers.values.count(where: { other in
            let otherURL = other.hop.request.url
            return otherURL.host == url.host && otherURL.port == url.port && otherURL.scheme == url.scheme
        })
    }

    private func pollMilliseconds() -> Int {
        // A socket left bytes to read for the next turn.
        guard pumpQueue.isEmpty else { return 0 }
        let milliseconds = deadlines.milliseconds(from: .now(), atMost: Self.maximumPollMilliseconds)
        guard let libcurl = socketWatch?.libcurlTimeoutMilliseconds, libcurl >= 0 else { return milliseconds }
        return min(milliseconds, libcurl)
    }

    private func remove(_ transfer: CurlTransfer) {
        _ = errand_curl_multi_remove_handle(multi, transfer.easy)
        poolLimits.transferEnded(transfer.hop.id, isStreaming: transfer.hop.request.isStreaming)
        applyPoolLimits()
        transfers[transfer.easy] = nil
        handlesByID[transfer.hop.id] = nil
        deadlines.cancel(transfer.hop.id)
        recycle(transfer.easy)
    }

    func recycle(_ easy: UnsafeMutableRawPointer) {
        guard spareHandles.count < Self.spareHandleLimit else { return errand_curl_easy_cleanup(easy) }
        errand_curl_easy_reset(easy)
        spareHandles.append(easy)
    }
}
