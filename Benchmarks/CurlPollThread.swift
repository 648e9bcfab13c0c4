import CErrandCurl
import Foundation

/// A thread that sleeps in `curl_multi_poll` on a multi handle with no transfers and runs the
/// work submitted to it, woken by `curl_multi_wakeup` only while it sleeps: how ``CurlTransport``'s
/// thread waits for commands, without any transfer.
final class CurlPollThread: @unchecked Sendable {  // Sendable because `work` and `isAsleep` are guarded by `lock`.
    private let lock = NSLock()
    private var work: [@Sendable () -> Void] = []
    private var isAsleep = false
    private let multiAddress: Int

    /// - Throws: ``BenchmarkError`` when libcurl cannot be loaded or gives no multi handle.
    init() throws(BenchmarkError) {
        guard errand_curl_load() == 1, let multi = errand_curl_multi_init() else {
            throw BenchmarkError(description: "libcurl could not be loaded for the hand-off benchmark")
        }
        multiAddress = Int(bitPattern: multi)
        let thread = Thread { [self] in run() }
        thread.start()
    }

    /// Runs `job` on the thread, waking it if it sleeps.
    func submit(_ job: @escaping @Sendable () -> Void) {
        let wakes = lock.withLock {
            work.append(job)
            return isAsleep
        }
        if wakes, let multi = UnsafeMutableRawPointer(bitPattern: multiAddress) { _ = errand_curl_multi_wakeup(multi) }
    }

    private func run() {
        guard let multi = UnsafeMutableRawPointer(bitPattern: multiAddress) else { return }
        while true {
            let jobs = lock.withLock {
                defer { work = [] }
                isAsleep = work.isEmpty
                return work
            }
            jobs.forEach { $0() }
            guard jobs.isEmpty else { continue }
            _ = errand_curl_multi_poll(multi, nil, 0, 1000)
            lock.withLock { isAsleep = false }
        }
    }
}
