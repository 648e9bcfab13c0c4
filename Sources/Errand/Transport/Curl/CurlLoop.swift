import CErrandCurl
import Dispatch
import Foundation

/// The curl thread's loop: runs the multi handle, starts, cancels and resumes transfers as
/// commanded, enforces timeouts, and reports each finished hop.
final class CurlLoop {
    private let driver: CurlDriver
    private let multi: UnsafeMutableRawPointer
    private let cookies: CurlCookies
    private let connection: CurlConnectionSettings
    /// The trusted roots as libcurl reads them, from memory that lives as long as the loop.
    private let certificateBundle: UnsafeMutableRawBufferPointer?
    private let calls: CurlCalls
    private let redirectPolicy = RedirectPolicy()
    private var transfers: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    private var handlesByID: [Int: UnsafeMutableRawPointer] = [:]
    /// Reset easy handles to reuse: a new handle per request costs allocations and its caches.
    private var spareHandles: [UnsafeMutableRawPointer] = []
    private var isShuttingDown = false
    /// The deliveries this turn of the loop started, which begin when it ends.
    private let drains = CurlDrainBatch()

    /// Spare handles kept; more are freed.
    private static let spareHandleLimit = 64
    /// The longest the thread sleeps without a timeout due.
    private static let maximumPollMilliseconds = 1000

    init(
        driver: CurlDriver, multi: UnsafeMutableRawPointer, cookies: CurlCookies, connection: CurlConnectionSettings,
        calls: CurlCalls
    ) {
        self.driver = driver
        self.multi = multi
        self.cookies = cookies
        self.connection = connection
        self.calls = calls
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
        while !(isShuttingDown && transfers.isEmpty && !driver.hasRequestsInFlight) {
            driver.takeCommands().forEach(handle)
            var running: Int32 = 0
            _ = errand_curl_multi_perform(multi, &running)
            collectFinished()
            expireTimeouts()
            drains.start()
            // Asleep only with no command waiting: one submitted from now on wakes the poll.
            let timeout = driver.prepareToSleep() ? pollMilliseconds() : 0
            _ = errand_curl_multi_poll(multi, Int32(timeout))
            driver.awoke()
        }
        spareHandles.forEach(errand_curl_easy_cleanup)
        spareHandles.removeAll()
    }

    private func handle(_ command: CurlDriver.Command) {
        switch command {
        case .start(let hop): start(hop)
        case .cancel(let id): transfer(id).map(remove)
        case .resume(let id): transfer(id).map(resume)
        case .resumeSending(let id): transfer(id).map(resumeSending)
        case .shutdown: isShuttingDown = true
        }
    }

    /// The running transfer of request `id`; `nil` between redirects and after it ended.
    private func transfer(_ id: Int) -> CurlTransfer? {
        handlesByID[id].flatMap { transfers[$0] }
    }

    private func start(_ hop: CurlHop) {
        // Cancelled while queued or between redirects.
        guard !hop.mailbox.isClosed else { return }
        guard let easy = spareHandles.popLast() ?? errand_curl_easy_init() else {
            hop.mailbox.close(
                with: .transport(URLError(.unknown, userInfo: [NSURLErrorFailingURLErrorKey: hop.request.url])),
                batch: drains)
            return
        }
        let transfer: CurlTransfer
        do {
            transfer = try CurlTransfer(
                hop: hop, easy: easy, cookies: cookies, connection: connection,
                certificateBundle: certificateBundle.map(UnsafeRawBufferPointer.init), drains: drains)
        } catch {
            recycle(easy)
            hop.mailbox.close(with: error, batch: drains)
            return
        }
        let added = calls.addHandle(multi, easy)
        guard added == ERRAND_CURLM_OK else {
            recycle(easy)
            let reason = "libcurl could not start the transfer: \(CurlLibrary.describeMulti(added))"
            hop.mailbox.close(
                with: .transport(
                    URLError(
                        .unknown,
                        userInfo: [NSURLErrorFailingURLErrorKey: hop.request.url, NSLocalizedDescriptionKey: reason])),
                batch: drains)
            return
        }
        transfers[easy] = transfer
        handlesByID[hop.id] = easy
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
        guard result != ERRAND_CURLE_OK else { return }
        remove(transfer)
        transfer.hop.mailbox.close(
            with: CurlErrorMapping.error(for: result, url: transfer.hop.request.url), batch: drains)
    }

    private func collectFinished() {
        var easy: UnsafeMutableRawPointer?
        var result: Int32 = 0
        while errand_curl_multi_next_done(multi, &easy, &result) == 1 {
            guard let easy, let transfer = transfers[easy] else { continue }
            finish(transfer, result: result)
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
        remove(transfer)
        hop.mailbox.post(.metrics(metrics), batch: drains)
        hop.mailbox.close(with: failure, batch: drains)
    }

    /// Works out the next hop off the curl thread: cookie storage may write to disk.
    private func follow(_ redirect: CurlTransfer.Redirect, from hop: CurlHop) {
        hop.mailbox.perform(batch: drains) { [driver, cookies, redirectPolicy] in
            cookies.store(redirect.setCookies, from: hop.request.url)
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
                nextHop.cookieHeader = cookies.header(for: request)
                nextHop.redirectCount += 1
                driver.submit(.start(nextHop))
            case .failure(let error):
                hop.mailbox.close(with: error)
            }
        }
    }

    private func expireTimeouts() {
        let now = DispatchTime.now()
        for transfer in transfers.values {
            guard let expiry = transfer.expiry, expiry <= now else { continue }
            remove(transfer)
            transfer.hop.mailbox.close(with: .timedOut, batch: drains)
        }
    }

    private func pollMilliseconds() -> Int {
        let now = DispatchTime.now().uptimeNanoseconds
        var milliseconds = Self.maximumPollMilliseconds
        for transfer in transfers.values {
            guard let expiry = transfer.expiry?.uptimeNanoseconds else { continue }
            let remaining = expiry > now ? Int((expiry - now) / 1_000_000) + 1 : 0
            milliseconds = min(milliseconds, remaining)
        }
        return milliseconds
    }

    private func remove(_ transfer: CurlTransfer) {
        _ = errand_curl_multi_remove_handle(multi, transfer.easy)
        transfers[transfer.easy] = nil
        handlesByID[transfer.hop.id] = nil
        recycle(transfer.easy)
    }

    private func recycle(_ easy: UnsafeMutableRawPointer) {
        guard spareHandles.count < Self.spareHandleLimit else { return errand_curl_easy_cleanup(easy) }
        errand_curl_easy_reset(easy)
        spareHandles.append(easy)
    }
}
