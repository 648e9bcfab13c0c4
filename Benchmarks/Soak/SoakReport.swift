import Foundation

/// The soak's closing report: each invariant passed or broken, then the numbers behind them.
struct SoakReport {
    let options: SoakOptions
    let tally: SoakTally
    let samples: [ResourceSample]
    /// The proxy's view just before the soak closed its sockets, and at the very end.
    let during: [ListenerReport]?
    let after: [ListenerReport]?
    let server: SoakServer
    let longestSilence: Double
    let droppedMonitorEvents: Int

    /// Every invariant, in the order the report lists them.
    static let invariants = [
        "every request ends exactly once",
        "every request ends within minutes, not held in a queue",
        "a task's events are whole and in order, nothing after didFinish",
        "every answer is the server's, unchanged",
        "every message arrives on the socket that sent it",
        "every message arrives in order, none lost",
        "every message arrives unchanged",
        "every message sent on a socket that stayed open arrives",
        "a socket lives as long as its peer keeps it",
        "a socket's feed ends only when the app ends it",
        "every event arrives once, in order, across reconnects",
        "every event stream keeps receiving",
        "an event source ends only when the app ends it",
        growthInvariant,
        poolInvariant,
    ]
    static let growthInvariant = "descriptors, threads and memory do not grow from the first minutes to the last"
    static let poolInvariant = "connections are reused, not opened per request"

    func print() {
        checkGrowth()
        checkPool()
        let broken = Dictionary(uniqueKeysWithValues: tally.broken.map { ($0.invariant, $0.breach) })
        Swift.print(
            "\n== Soak: \(String(format: "%g", options.minutes)) min under \(options.transport.rawValue), "
                + "faults \(options.faults ? "on" : "off"), seed \(options.seed)")
        Swift.print("\nInvariants")
        for invariant in Self.invariants + broken.keys.filter({ !Self.invariants.contains($0) }).sorted() {
            let count = broken[invariant]?.count
            Swift.print(
                "  \(count == nil ? "PASS" : "FAIL")  \(invariant)\(count.map { " — broken \($0) times" } ?? "")")
        }
        requests()
        sockets()
        streams()
        resources()
        connections()
        if droppedMonitorEvents > 0 {
            Swift.print("\n  (the ledger missed \(droppedMonitorEvents) monitor events: it fell behind)")
        }
        if !broken.isEmpty {
            Swift.print("\nBreaches (the first five of each)")
            for (invariant, breach) in tally.broken {
                Swift.print("  \(invariant) — \(breach.count) times")
                breach.examples.forEach { Swift.print("    \($0)") }
            }
        }
        let names = tally.broken.map(\.invariant)
        Swift.print(
            names.isEmpty
                ? "\nSOAK PASSED: every invariant held."
                : "\nSOAK FAILED: \(names.count) invariant\(names.count == 1 ? "" : "s") broke: \(names.joined(separator: "; "))."
        )
    }

    // MARK: Sections

    private func requests() {
        Swift.print("\nRequests (ok / failed; from the cache, revalidated)")
        for kind in ["get", "post", "http-cached", "app-cached", "bytes", "download"] {
            let counts = ["ok", "failed", "wrong", "from-cache", "revalidated"].map {
                tally.counter("http.\(kind).\($0)")
            }
            Swift.print(
                "  \(kind.padding(toLength: 12, withPad: " ", startingAt: 0)) \(counts[0]) ok, \(counts[1]) failed"
                    + (counts[2] > 0 ? ", \(counts[2]) wrong" : "")
                    + (counts[3] > 0 ? "; \(counts[3]) from the cache" : "")
                    + (counts[4] > 0 ? ", \(counts[4]) revalidated" : ""))
        }
        Swift.print(
            "  downloads resumed after a failure: \(tally.counter("http.download.resumed")), given up after "
                + "\(RequestMix.downloadAttempts) attempts: \(tally.counter("http.download.gave-up"))")
        let failures = tally.counters(under: "http.failure.")
        if !failures.isEmpty {
            Swift.print("  failures by reason: " + failures.map { "\($0.0) ×\($0.1)" }.joined(separator: ", "))
        }
        let retried = tally.counters(under: "retried.")
        if !retried.isEmpty {
            Swift.print(
                "  attempts that failed and were retried (RetryPolicy; streams' and sockets' handshakes too): "
                    + retried.map { "\($0.0) ×\($0.1)" }.joined(separator: ", "))
        }
    }

    private func sockets() {
        Swift.print(
            "\nWebSockets: \(options.sockets) sockets, \(tally.counter("ws.connections")) connections, "
                + "\(tally.counter("ws.sent")) messages sent, \(tally.counter("ws.echoed")) echoed right; "
                + "drops \(tally.counter("ws.drops.planned")) planned (\(tally.counter("ws.lost-at-planned-drop")) "
                + "messages in flight lost with them), \(tally.counter("ws.drops.unplanned")) unplanned "
                + "(\(tally.counter("ws.lost-at-unplanned-drop")) lost); \(tally.counter("ws.handshakes-failed")) "
                + "handshakes failed; \(tally.counter("ws.feeds-ended")) feeds ended for good")
        let ages = tally.counters(under: "ws.unplanned-age-bucket.").compactMap { key, count in
            Int(key).map { ($0, count) }
        }.sorted { $0.0 < $1.0 }
        if !ages.isEmpty {
            Swift.print(
                "  unplanned drops by the connection's age: "
                    + ages.map { "\($0.0)–\($0.0 + 10) s ×\($0.1)" }.joined(separator: ", "))
        }
        if let ends = during?.first(where: { $0.name == "ws" })?.clientEnds, !ends.isEmpty {
            let sorted = ends.map(\.age).sorted()
            let examples = ends.prefix(6).map { "\($0.label) at \(String(format: "%.1f", $0.age)) s" }
            Swift.print(
                "  the proxy saw the client itself end \(ends.count) WebSocket connections, at ages "
                    + String(
                        format: "%.1f–%.1f s (median %.1f s)", sorted[0], sorted[sorted.count - 1],
                        sorted[sorted.count / 2])
                    + ", e.g. " + examples.joined(separator: ", "))
        }
    }

    private func streams() {
        Swift.print(
            "\nEvent streams: \(options.streams) streams, \(tally.counter("sse.events")) events in order, "
                + "\(tally.counter("sent.port.\(server.ssePort)")) connections asked for; longest silence "
                + String(format: "%.1f s", longestSilence))
    }

    private func resources() {
        let growth = ResourceGrowth(samples: samples, settle: settle, end: tally.elapsed)
        func window(_ window: ResourceGrowth.Window) -> String {
            String(
                format: "t=%.0f–%.0f s: at most %d fds, %d threads; median rss %.1f MiB (%d samples)", window.from,
                window.to, window.maxDescriptors, window.maxThreads, window.medianResidentMiB, window.samples.count)
        }
        Swift.print("\nProcess (fds from /proc/self/fd, threads and VmRSS from /proc/self/status)")
        Swift.print("  first: \(window(growth.first))")
        Swift.print("  last:  \(window(growth.last))")
        if let peak = samples.map(\.residentKiB).max() {
            Swift.print(String(format: "  highest rss sampled: %.1f MiB", Double(peak) / 1024))
        }
    }

    private func connections() {
        guard let after else { return Swift.print("\nConnections: the server process did not report") }
        Swift.print("\nConnections, as the proxy counted them (ended by: client / server / fault / idle limit)")
        for listener in after {
            let port = port(of: listener.name)
            let sent = tally.counter("sent.port.\(port)")
            let perHundred = sent > 0 ? Double(listener.accepted) * 100 / Double(sent) : 0
            let endings = ListenerReport.Ending.allCases.map { String(listener.ended($0)) }.joined(separator: " / ")
            let faults = listener.faults.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }.joined(
                separator: ", ")
            Swift.print(
                "  \(listener.name.padding(toLength: 5, withPad: " ", startingAt: 0)) \(listener.accepted) connections "
                    + "for \(sent) requests sent (\(String(format: "%.1f", perHundred)) per 100); ended by \(endings); "
                    + "faults: \(faults.isEmpty ? "none" : faults)")
        }
    }

    // MARK: Computed invariants

    /// The load has settled once every socket and stream had time to open.
    private var settle: Double { min(60, options.seconds / 5) }

    private func checkGrowth() {
        let growth = ResourceGrowth(samples: samples, settle: settle, end: tally.elapsed)
        for grown in growth.growth { tally.breach(Self.growthInvariant, grown) }
    }

    /// Connections the plain-request port opened beyond what the proxy's own closes (faults,
    /// the idle limit) explain, a pool's worth and 5 % of the requests: a pool that does not
    /// hold its connections, such as one that other sockets crowd out.
    private func checkPool() {
        guard let http = after?.first(where: { $0.name == "http" }) else { return }
        let sent = tally.counter("sent.port.\(server.httpPort)")
        let explained = http.ended(.fault) + http.ended(.idle) + 12 + sent / 20
        guard http.accepted > explained else { return }
        tally.breach(
            Self.poolInvariant,
            "\(http.accepted) connections for \(sent) requests sent; the proxy closed \(http.ended(.fault) + http.ended(.idle)) "
                + "itself and the client \(http.ended(.client))")
    }

    private func port(of listener: String) -> UInt16 {
        switch listener {
        case "http": server.httpPort
        case "sse": server.ssePort
        default: server.webSocketPort
        }
    }
}
