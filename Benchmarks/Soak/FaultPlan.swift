import Foundation

/// What one proxied connection suffers: a delay on every piece both ways, a cap on what the
/// server sends, and at most one breaking event. Chosen at random when a connection is accepted
/// (``FaultMix``), or named by the query of its first request line (``FaultPlan/init(requestLine:)``),
/// so that a WebSocket client knows which of its connections are meant to break, and when.
struct FaultPlan: Sendable, Equatable {
    /// What breaks the connection.
    enum Kind: String, Sendable, CaseIterable {
        /// Both sides get a TCP reset.
        case reset
        /// The client gets a FIN (the server seems to have closed its side) while its own side
        /// stays open and unread; the server's side is closed.
        case halfClose = "halfclose"
        /// Nothing moves either way for a while; then everything flows again.
        case stall
    }

    /// A breaking event, after so many bytes sent to the client or so many seconds.
    struct Event: Sendable, Equatable {
        var kind: Kind
        /// Bytes forwarded to the client before it happens; `nil` when timed.
        var afterBytes: Int?
        /// Seconds after the connection opened; `nil` when counted in bytes.
        var atSeconds: Double?
        /// How long a stall lasts.
        var duration: Double = 0
    }

    /// Added to every piece, both ways, in seconds.
    var latency: Double = 0
    /// At most this many bytes a second towards the client; `nil` for no limit.
    var bytesPerSecond: Int?
    var event: Event?

    /// No fault.
    static let clean = FaultPlan()

    init(latency: Double = 0, bytesPerSecond: Int? = nil, event: Event? = nil) {
        self.latency = latency
        self.bytesPerSecond = bytesPerSecond
        self.event = event
    }

    /// The plan a request line names, `nil` when it names none. The query items read:
    /// `proxy=KIND@SECONDS[+DURATION]` (`reset@40`, `halfclose@90`, `stall@30+5`),
    /// `proxy_latency_ms=MS` and `proxy_rate=BYTES_PER_SECOND`.
    init?(requestLine: String) {
        let target = requestLine.split(separator: " ").dropFirst().first ?? ""
        guard let query = target.split(separator: "?", maxSplits: 1).dropFirst().first else { return nil }
        var named = false
        for item in query.split(separator: "&") {
            let pair = item.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2 else { continue }
            switch pair[0] {
            case "proxy":
                guard let event = Self.event(pair[1]) else { continue }
                self.event = event
                named = true
            case "proxy_latency_ms":
                guard let milliseconds = Double(pair[1]), milliseconds >= 0 else { continue }
                latency = milliseconds / 1000
                named = true
            case "proxy_rate":
                guard let rate = Int(pair[1]), rate > 0 else { continue }
                bytesPerSecond = rate
                named = true
            default:
                continue
            }
        }
        guard named else { return nil }
    }

    /// The query items that make a connection suffer this plan: what ``init(requestLine:)`` reads.
    var queryItems: [String] {
        var items: [String] = []
        if latency > 0 { items.append("proxy_latency_ms=\(Int(latency * 1000))") }
        if let bytesPerSecond { items.append("proxy_rate=\(bytesPerSecond)") }
        if let event, let at = event.atSeconds {
            let duration = event.kind == .stall ? "+\(String(format: "%.1f", event.duration))" : ""
            items.append("proxy=\(event.kind.rawValue)@\(String(format: "%.1f", at))\(duration)")
        }
        return items
    }

    /// Whether the connection is meant to end by the proxy's hand.
    var breaksConnection: Bool {
        guard let event else { return false }
        return event.kind != .stall
    }

    private static func event(_ text: String) -> Event? {
        let parts = text.split(separator: "@", maxSplits: 1)
        guard parts.count == 2, let kind = Kind(rawValue: String(parts[0])) else { return nil }
        let timing = parts[1].split(separator: "+", maxSplits: 1)
        guard let at = timing.first.flatMap({ Double($0) }), at >= 0 else { return nil }
        let duration = timing.dropFirst().first.flatMap { Double($0) } ?? 0
        return Event(kind: kind, afterBytes: nil, atSeconds: at, duration: max(0, duration))
    }
}

/// How often each fault strikes the connections a listener accepts, and how hard. A connection
/// meets one plan after another: each lasts a window of bytes sent to the client, or until its
/// event, so a pooled connection that lives for minutes meets many.
struct FaultMix: Sendable {
    /// The window of one plan: bytes sent to the client before its reset, half-close or stall,
    /// or before the next plan.
    var bytes: ClosedRange<Int>
    /// How long a stall lasts, in seconds.
    var stall: ClosedRange<Double>
    /// Throughput caps, in bytes a second.
    var rates: ClosedRange<Int> = 128 << 10...2 << 20
    /// Added latency, in seconds.
    var latencies: ClosedRange<Double> = 0.002...0.040

    /// The next plan of a connection, its event's bytes counted from the plan's start: about
    /// half are clean.
    func draw(_ random: inout SoakRandom) -> FaultPlan {
        let roll = random.int(in: 0...99)
        var plan = FaultPlan()
        switch roll {
        case 0..<45:
            break
        case 45..<60:
            plan.latency = random.double(in: latencies)
        case 60..<68:
            plan.bytesPerSecond = random.int(in: rates)
        case 68..<76:
            plan.event = .init(kind: .reset, afterBytes: random.int(in: bytes), atSeconds: nil)
        case 76..<84:
            plan.event = .init(kind: .halfClose, afterBytes: random.int(in: bytes), atSeconds: nil)
        case 84..<94:
            plan.event = .init(
                kind: .stall, afterBytes: random.int(in: bytes), atSeconds: nil, duration: random.double(in: stall))
        default:
            plan.latency = random.double(in: latencies)
            plan.event = .init(kind: .reset, afterBytes: random.int(in: bytes), atSeconds: nil)
        }
        return plan
    }
}

/// A small, seeded generator (SplitMix64), so that a soak's choices can be drawn again.
struct SoakRandom: Sendable {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func int(in range: ClosedRange<Int>) -> Int {
        let span = UInt64(range.upperBound - range.lowerBound) &+ 1
        guard span != 0 else { return Int(truncatingIfNeeded: next()) }
        return range.lowerBound + Int(next() % span)
    }

    mutating func double(in range: ClosedRange<Double>) -> Double {
        let unit = Double(next() >> 11) / Double(1 << 53)
        return range.lowerBound + unit * (range.upperBound - range.lowerBound)
    }

    /// `true` with probability `chance` (0…1).
    mutating func chance(_ chance: Double) -> Bool {
        double(in: 0...1) < chance
    }
}
