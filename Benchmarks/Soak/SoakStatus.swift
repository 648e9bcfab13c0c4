import Foundation

/// Samples the process while the load runs and prints a line a minute, so that a run cut short
/// — by a crash, say — still says how far it got and what it saw.
struct SoakStatus {
    let tally: SoakTally
    let sockets: SocketFleet
    let streams: StreamFleet
    let ledger: SoakLedger

    /// Seconds between status lines.
    static let statusInterval = 60.0

    /// Seconds between samples: 15, less in a short soak, so that each window has a few.
    static func sampleInterval(_ seconds: Double) -> Double {
        max(1, min(15, seconds / 40))
    }

    /// Samples until `seconds` into the soak; returns the samples.
    func watch(until seconds: Double) async -> [ResourceSample] {
        var samples: [ResourceSample] = []
        var nextSample = 0.0
        var nextStatus = min(Self.statusInterval, seconds)
        while tally.elapsed < seconds {
            let now = tally.elapsed
            if now >= nextSample {
                if let sample = ResourceSample.now(at: now) { samples.append(sample) }
                nextSample += Self.sampleInterval(seconds)
            }
            streams.checkStarvation()
            ledger.checkOverdue(after: 180)
            if now >= nextStatus {
                line(samples.last)
                nextStatus += Self.statusInterval
            }
            let wake = min(nextSample, nextStatus, seconds) - tally.elapsed
            try? await Task.sleep(for: .milliseconds(Int(max(0.05, min(wake, 5)) * 1000)))
        }
        if let sample = ResourceSample.now(at: tally.elapsed) { samples.append(sample) }
        line(samples.last)
        return samples
    }

    private func line(_ sample: ResourceSample?) {
        let resources = sample.map {
            String(
                format: "fds %d  threads %d  rss %.1f MiB", $0.descriptors, $0.threads, Double($0.residentKiB) / 1024)
        }
        let kinds = ["get", "post", "http-cached", "app-cached", "bytes", "download"]
        let ok = kinds.reduce(0) { $0 + tally.counter("http.\($1).ok") }
        let failed = kinds.reduce(0) { $0 + tally.counter("http.\($1).failed") }
        print(
            "\(tally.stamp)  \(resources ?? "no /proc")  | requests \(ok + failed) (\(failed) failed)"
                + "  | sockets \(sockets.openCount) open, \(tally.counter("ws.echoed")) echoes, drops "
                + "\(tally.counter("ws.drops.planned")) planned \(tally.counter("ws.drops.unplanned")) unplanned"
                + "  | streams \(streams.liveCount) live, \(tally.counter("sse.events")) events"
                + "  | tasks \(ledger.runningCount) running  | breaches \(tally.breachCount)")
        fflush(nil)
    }
}
