import Errand
import Foundation

/// What one of the soak's sockets sent and received on its current connection, and the checks
/// on every echo: the right socket, the right connection, in order, unchanged.
///
/// Each connection is a *generation* of the socket; its handshake names it (`soak=ID.GEN`) and
/// asks the server to tag each echo with `sIDgGEN|` (the server read the message on that
/// connection). An echo whose tag or content names another socket crossed connections; one
/// naming an earlier generation of this socket came off a connection that should be gone.
final class SocketLedger: @unchecked Sendable {  // every `var` is read and written only while holding `lock`
    let profile: SocketProfile
    private let tally: SoakTally
    private let lock = NSLock()
    private var generation = 1
    private var plan = FaultPlan.clean
    private var openedAt: Double?
    private var lastSent = 0
    private var lastReceived = 0
    /// Sequence numbers sent and not yet echoed, oldest first.
    private var outstanding: [Int] = []
    private var lastActivity = 0.0
    private var current: WebSocket?

    init(profile: SocketProfile, tally: SoakTally, plan: FaultPlan) {
        self.profile = profile
        self.tally = tally
        self.plan = plan
    }

    /// The handshake path of the current generation: the plan for the proxy, the label and tag.
    var handshakePath: String {
        lock.withLock {
            let label = "\(profile.id).\(generation)"
            let items = ["soak=\(label)", "tag=s\(profile.id)g\(generation)"] + plan.queryItems
            return "/ws/echo?" + items.joined(separator: "&")
        }
    }

    /// The socket of the current connection; `nil` between connections.
    var socket: WebSocket? { lock.withLock { current } }
    var isOpen: Bool { lock.withLock { current != nil } }
    var outstandingCount: Int { lock.withLock { current == nil ? 0 : outstanding.count } }

    /// A connection opened; returns its generation.
    func opened(_ socket: WebSocket) -> Int {
        let now = tally.elapsed
        return lock.withLock {
            current = socket
            openedAt = now
            lastActivity = now
            (lastSent, lastReceived, outstanding) = (0, 0, [])
            return generation
        }
    }

    /// The next message of `generation`, noted as sent before it goes; `nil` once that
    /// connection is gone.
    func nextMessage(generation sending: Int, size: Int) -> String? {
        let now = tally.elapsed
        return lock.withLock {
            guard current != nil, sending == generation else { return nil }
            lastSent += 1
            outstanding.append(lastSent)
            lastActivity = now
            return profile.message(generation: generation, sequence: lastSent, size: size)
        }
    }

    /// Checks one echo.
    func received(_ message: WebSocketMessage) {
        tally.count("ws.received")
        guard case .text(let text) = message else {
            return breach("garbled", "socket \(profile.id) received a binary message; it sends only text")
        }
        let now = tally.elapsed
        let verdict = lock.withLock { () -> (String, String)? in
            lastActivity = now
            return check(text)
        }
        if let (invariant, detail) = verdict { breach(invariant, detail) } else { tally.count("ws.echoed") }
    }

    /// The connection ended with `error`: whether the plan meant it to, with what was lost.
    /// Starts the next generation, with `nextPlan`.
    func dropped(_ error: ErrandError, nextPlan: FaultPlan) {
        let now = tally.elapsed
        let (age, idle, lost, planned, label) = lock.withLock { () -> (Double, Double, Int, Bool, String) in
            let age = now - (openedAt ?? now)
            let at = plan.event?.atSeconds ?? .infinity
            let planned = plan.breaksConnection && age >= at - 0.5
            let result = (age, now - lastActivity, outstanding.count, planned, "\(profile.id).\(generation)")
            current = nil
            openedAt = nil
            outstanding = []
            generation += 1
            plan = nextPlan
            return result
        }
        tally.count(planned ? "ws.drops.planned" : "ws.drops.unplanned")
        tally.count(planned ? "ws.lost-at-planned-drop" : "ws.lost-at-unplanned-drop", by: lost)
        guard !planned else { return }
        tally.count("ws.unplanned-age-bucket.\(Int(age / 10) * 10)")
        breach(
            "a socket lives as long as its peer keeps it",
            "socket \(profile.id) (\(profile.kind.rawValue)\(profile.compressed ? ", compressed" : "")) connection "
                + "\(label) dropped at age \(String(format: "%.1f", age)) s with no fault planned (\(error)); "
                + "idle \(String(format: "%.1f", idle)) s, \(lost) messages unanswered")
    }

    /// The soak is over: the messages still unanswered on this open socket are lost.
    func lostAtEnd() -> Int {
        lock.withLock { current == nil ? 0 : outstanding.count }
    }

    // MARK: Checks

    /// `nil` when `text` is the next echo due; else the invariant it breaks and how.
    private func check(_ text: String) -> (String, String)? {
        let me = profile.id
        guard let bar = text.firstIndex(of: "|") else {
            return ("garbled", "socket \(me) received an untagged message: \(text.prefix(80))")
        }
        let tag = text[..<bar]
        let body = text[text.index(after: bar)...]
        let fields = body.split(separator: " ", maxSplits: 4, omittingEmptySubsequences: false)
        guard fields.count == 5, let id = Self.field(fields[0], "s"), let sent = Self.field(fields[1], "g"),
            let sequence = Self.field(fields[2], "n"), let size = Self.field(fields[3], "l")
        else {
            return ("garbled", "socket \(me) received a message it cannot read: \(text.prefix(80))")
        }
        if tag != "s\(me)g\(generation)" || id != me {
            let how =
                tag != "s\(me)g\(generation)"
                ? "the server echoed it on connection \(tag)" : "it went out on this socket's own connection"
            return (
                "every message arrives on the socket that sent it",
                "socket \(me) (connection \(me).\(generation)) received socket \(id)'s message \(sequence) of connection "
                    + "\(id).\(sent): \(how)"
            )
        }
        if sent != generation {
            return (
                "every message arrives on the socket that sent it",
                "socket \(me) connection \(generation) received message \(sequence) of its earlier connection \(sent)"
            )
        }
        guard sequence == lastReceived + 1, outstanding.first == sequence else {
            let expected = lastReceived + 1
            lastReceived = max(lastReceived, sequence)
            outstanding.removeAll { $0 <= sequence }
            return (
                "every message arrives in order, none lost",
                "socket \(me) connection \(generation) received message \(sequence) where \(expected) was due "
                    + "(\(sequence > expected ? "\(sequence - expected) lost" : "out of order or repeated"))"
            )
        }
        lastReceived = sequence
        outstanding.removeFirst()
        let expectedBody = profile.message(generation: sent, sequence: sequence, size: size)
        guard body == expectedBody else {
            return ("garbled", "socket \(me) message \(sequence) came back changed")
        }
        return nil
    }

    private static func field(_ text: Substring, _ name: String) -> Int? {
        guard text.hasPrefix(name + "=") else { return nil }
        return Int(text.dropFirst(name.count + 1))
    }

    private func breach(_ invariant: String, _ detail: String) {
        tally.breach(invariant == "garbled" ? "every message arrives unchanged" : invariant, detail)
    }
}
