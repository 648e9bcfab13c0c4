import Foundation

extension HTTPArchive.Timings {
    /// HAR's per-phase milliseconds from ``TransportMetrics``' cumulative seconds; without
    /// metrics (URLSession reports none on Linux), the wait and receive phases as a recorder saw
    /// them, from sending to the head and from the head to the end.
    init(
        metrics: TransportMetrics?, sentAt: ContinuousClock.Instant, headAt: ContinuousClock.Instant?,
        finishedAt: ContinuousClock.Instant
    ) {
        guard let metrics else {
            let head = headAt ?? finishedAt
            self.init(
                blocked: -1, dns: -1, connect: -1, send: 0, wait: Self.milliseconds(head - sentAt),
                receive: Self.milliseconds(finishedAt - head), ssl: -1)
            return
        }
        let resolved = metrics.domainLookup
        let connected = max(metrics.connect, resolved)
        let secured = max(metrics.secureConnection, connected)
        let ready = metrics.secureConnection > 0 ? secured : connected
        let firstByte = metrics.firstByte > 0 ? max(metrics.firstByte, ready) : max(metrics.total, ready)
        // A phase that did not happen is 0 in the metrics, -1 in HAR; `connect` includes `ssl`.
        self.init(
            blocked: -1,
            dns: metrics.domainLookup > 0 ? Self.milliseconds(resolved) : -1,
            connect: metrics.connect > 0 ? Self.milliseconds(ready - resolved) : -1,
            send: 0,
            wait: Self.milliseconds(firstByte - ready),
            receive: Self.milliseconds(max(metrics.total, firstByte) - firstByte),
            ssl: metrics.secureConnection > 0 ? Self.milliseconds(secured - connected) : -1)
    }

    /// Non-negative milliseconds to the microsecond; a value that is not finite counts as 0, as
    /// JSON cannot hold it.
    private static func milliseconds(_ seconds: TimeInterval) -> Double {
        guard seconds.isFinite, seconds > 0 else { return 0 }
        return (seconds * 1_000_000).rounded() / 1000
    }

    private static func milliseconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return milliseconds(Double(seconds) + Double(attoseconds) / 1e18)
    }
}
