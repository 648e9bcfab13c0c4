import Errand
import Foundation

/// The soak's WebSockets: each a ``ReconnectingWebSocket`` to `/ws/echo` through the proxy's
/// WebSocket port, sending as its ``SocketProfile`` says and checking every echo
/// (``SocketLedger``). A socket whose feed ends for good is opened again after a second, as an
/// app would, and the end counted.
final class SocketFleet: Sendable {
    private let agent: NetworkAgent
    private let baseURL: String
    private let tally: SoakTally
    private let faults: Bool
    private let ledgers: [SocketLedger]
    private let seed: UInt64
    /// Set when the soak's load ends: the senders stop, the sockets then close.
    private let stopping = Flag()

    init(count: Int, agent: NetworkAgent, port: UInt16, tally: SoakTally, faults: Bool, seed: UInt64) {
        self.agent = agent
        baseURL = "http://127.0.0.1:\(port)"
        self.tally = tally
        self.faults = faults
        self.seed = seed
        var random = SoakRandom(seed: seed)
        ledgers = SocketProfile.fleet(count: count).map {
            SocketLedger(profile: $0, tally: tally, plan: $0.plan(&random, faults: faults))
        }
    }

    var openCount: Int { ledgers.filter(\.isOpen).count }

    /// Runs every socket until ``close()``; returns once all have ended.
    func run() async {
        await withTaskGroup(of: Void.self) { group in
            for ledger in ledgers {
                group.addTask { [self] in await keep(ledger) }
            }
        }
    }

    /// Stops sending, waits up to `patience` seconds for the echoes still due, then closes
    /// every socket. Returns the messages still unanswered on sockets that stayed open.
    func close(patience: Double) async -> Int {
        stopping.set()
        let deadline = tally.elapsed + patience
        while tally.elapsed < deadline, ledgers.contains(where: { $0.outstandingCount > 0 }) {
            try? await Task.sleep(for: .milliseconds(200))
        }
        var lost = 0
        for ledger in ledgers {
            let unanswered = ledger.lostAtEnd()
            lost += unanswered
            if unanswered > 0 {
                tally.breach(
                    "every message sent on a socket that stayed open arrives",
                    "socket \(ledger.profile.id) (\(ledger.profile.kind.rawValue)): \(unanswered) messages unanswered "
                        + "\(Int(patience)) s after the last was sent")
            }
        }
        await withTaskGroup(of: Void.self) { group in
            for ledger in ledgers {
                if let socket = ledger.socket { group.addTask { await socket.close() } }
            }
        }
        return lost
    }

    /// One socket, reconnecting, until the soak ends.
    private func keep(_ ledger: SocketLedger) async {
        var random = SoakRandom(seed: seed &+ UInt64(ledger.profile.id) &* 7919)
        let request = SocketRequest(baseUrl: baseURL, ledger: ledger)
        let backoff = ReconnectBackoff(initialDelay: 0.5, maximumDelay: 10)
        while !stopping.isSet {
            var sender: Task<Void, Never>?
            do {
                let feed = ReconnectingWebSocket(
                    request, agent: agent, options: ledger.profile.options, backoff: backoff)
                for try await event in feed {
                    switch event {
                    case .connected(let socket):
                        tally.count("ws.connections")
                        let generation = ledger.opened(socket)
                        let seed = random.next()
                        sender = Task { [self] in await send(on: socket, ledger, generation, seed: seed) }
                    case .message(let message):
                        ledger.received(message)
                    case .disconnected(let error):
                        sender?.cancel()
                        sender = nil
                        if ledger.isOpen {
                            ledger.dropped(error, nextPlan: ledger.profile.plan(&random, faults: faults))
                        } else {
                            tally.count("ws.handshakes-failed")
                        }
                    }
                }
                sender?.cancel()
                guard !stopping.isSet else { return }
                tally.breach(
                    "a socket lives as long as its peer keeps it",
                    "socket \(ledger.profile.id)'s feed ended by itself (the server closed it normally)")
            } catch {
                sender?.cancel()
                guard !stopping.isSet else { return }
                if ledger.isOpen { ledger.dropped(error, nextPlan: ledger.profile.plan(&random, faults: faults)) }
                tally.count("ws.feeds-ended")
                tally.breach(
                    "a socket's feed ends only when the app ends it",
                    "socket \(ledger.profile.id) (\(ledger.profile.kind.rawValue)): its feed ended for good with \(error)"
                )
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }

    /// Sends on one connection as the profile says, until it ends or the soak does.
    private func send(on socket: WebSocket, _ ledger: SocketLedger, _ generation: Int, seed: UInt64) async {
        var random = SoakRandom(seed: seed)
        // The first message soon after opening; then the profile's pauses.
        var pause = random.double(in: 0.2...2)
        while !Task.isCancelled, !stopping.isSet {
            guard (try? await Task.sleep(for: .milliseconds(Int(pause * 1000)))) != nil, !stopping.isSet else { return }
            for size in ledger.profile.burst(&random) {
                guard let message = ledger.nextMessage(generation: generation, size: size) else { return }
                do {
                    try await socket.send(message)
                    tally.count("ws.sent")
                } catch {
                    // The receiving side sees the end and reports it.
                    tally.count("ws.send-failed")
                    return
                }
            }
            pause = ledger.profile.pause(&random)
        }
    }
}

/// A socket's handshake: its path names the connection's generation and the proxy's plan for it.
struct SocketRequest: BaseRequest {
    let baseUrl: String
    let ledger: SocketLedger
    var url: String { ledger.handshakePath }
    var timeoutInterval: TimeInterval { 20 }
}

/// A flag set once, read from anywhere.
final class Flag: @unchecked Sendable {  // `value` is read and written only while holding `lock`
    private let lock = NSLock()
    private var value = false

    var isSet: Bool { lock.withLock { value } }

    func set() {
        lock.withLock { value = true }
    }
}
