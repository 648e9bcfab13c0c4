import Errand
import Foundation

/// How one of the soak's WebSockets behaves: how often it sends, how much, compressed or not.
struct SocketProfile: Sendable {
    enum Kind: String, Sendable {
        /// A message every 130–250 s, longer than libcurl's 118 s idle limit, pinging every 30 s.
        case idle
        /// A small message every 0.3–2 s.
        case chatty
        /// A message every 60–180 s and no keep-alive pings at all.
        case quiet
        /// Every 5–15 s a burst of 4–10 messages of 16–128 KiB.
        case bulk
    }

    let id: Int
    let kind: Kind
    let compressed: Bool

    /// The soak's `count` sockets, kinds interleaved so that a small fleet has each: of every 25,
    /// 8 idle, 12 chatty, 2 quiet, 3 bulk; every other one of each kind compressed, and every bulk one.
    static func fleet(count: Int) -> [SocketProfile] {
        var seen: [Kind: Int] = [:]
        return (0..<count).map { id in
            let kind = pattern[id % pattern.count]
            seen[kind, default: 0] += 1
            return SocketProfile(id: id, kind: kind, compressed: kind == .bulk || seen[kind, default: 0] % 2 == 1)
        }
    }

    private static let pattern: [Kind] = [
        .idle, .chatty, .bulk, .idle, .chatty, .quiet, .idle, .chatty, .chatty, .bulk, .chatty, .idle, .chatty,
        .quiet, .idle, .chatty, .bulk, .idle, .chatty, .chatty, .idle, .chatty, .chatty, .idle, .chatty,
    ]

    var options: WebSocketOptions {
        var options = WebSocketOptions()
        options.compression = compressed
        if kind == .quiet { options.pingInterval = nil }
        options.maximumMessageSize = 1 << 20
        return options
    }

    /// Seconds before the next send.
    func pause(_ random: inout SoakRandom) -> Double {
        switch kind {
        case .idle: random.double(in: 130...250)
        case .chatty: random.double(in: 0.3...2)
        case .quiet: random.double(in: 60...180)
        case .bulk: random.double(in: 5...15)
        }
    }

    /// The sizes of the messages of the next send.
    func burst(_ random: inout SoakRandom) -> [Int] {
        switch kind {
        case .idle, .quiet: [random.int(in: 16...512)]
        case .chatty: [random.int(in: 16...2048)]
        case .bulk: (0..<random.int(in: 4...10)).map { _ in random.int(in: (16 << 10)...(128 << 10)) }
        }
    }

    /// What the proxy does to a new connection of this socket: about half are left alone; the
    /// rest are reset or half-closed at some point, stalled for less than the ping timeout, or
    /// slowed. None when faults are off.
    func plan(_ random: inout SoakRandom, faults: Bool) -> FaultPlan {
        guard faults else { return .clean }
        let roll = random.int(in: 0...99)
        switch roll {
        case 0..<55:
            return .clean
        case 55..<70:
            return FaultPlan(event: .init(kind: .reset, atSeconds: random.double(in: 20...400)))
        case 70..<80:
            return FaultPlan(event: .init(kind: .halfClose, atSeconds: random.double(in: 20...400)))
        case 80..<90:
            return FaultPlan(
                event: .init(kind: .stall, atSeconds: random.double(in: 10...300), duration: random.double(in: 2...6)))
        default:
            return FaultPlan(
                latency: random.double(in: 0.005...0.050),
                bytesPerSecond: kind == .bulk ? random.int(in: (256 << 10)...(2 << 20)) : nil)
        }
    }

    // MARK: Messages

    /// Message `sequence` of connection `generation`: `s=ID g=GEN n=SEQ l=SIZE ` and `size`
    /// bytes of text that depend on all three, so that a message changed on the way is seen.
    func message(generation: Int, sequence: Int, size: Int) -> String {
        "s=\(id) g=\(generation) n=\(sequence) l=\(size) "
            + Self.padding(id: id, generation: generation, sequence: sequence, size: size)
    }

    static func padding(id: Int, generation: Int, sequence: Int, size: Int) -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789".utf8)
        let start = (id &* 31 &+ generation &* 7 &+ sequence &* 13) % alphabet.count
        // Runs of one letter, so that compression has something to do.
        let bytes = (0..<size).map { alphabet[(start + $0 / 64) % alphabet.count] }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension FaultPlan.Event {
    init(kind: FaultPlan.Kind, atSeconds: Double, duration: Double = 0) {
        self.init(kind: kind, afterBytes: nil, atSeconds: atSeconds, duration: duration)
    }
}
