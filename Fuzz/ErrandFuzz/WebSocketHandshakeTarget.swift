import Errand
import Foundation

/// A server's answer to a WebSocket's upgrade request, in pieces of any size: the head read by
/// ``HandshakeAnswerReader`` (bounded, each byte looked at once), a refusal's body as it is
/// framed, and a `101`'s fields checked against an offer of subprotocols and compression.
/// Reading it in pieces must give what reading it whole gives; no refusal keeps more than
/// ``HandshakeAnswerReader/bodyLimit`` bytes; an agreement never holds what was not offered.
enum WebSocketHandshakeTarget {
    /// The key the seeds' `Sec-WebSocket-Accept` answers: RFC 6455's example.
    static let key = "dGhlIHNhbXBsZSBub25jZQ=="
    private static let subprotocols = ["chat", "superchat", "mqtt"]

    static func run(_ data: Data) {
        var input = FuzzInput(data)
        let flags = input.byte()
        var options = WebSocketOptions()
        options.compression = flags & 1 != 0
        options.subprotocols = subprotocols.enumerated().filter { flags & (2 << $0.offset) != 0 }.map(\.element)
        let chunks = input.chunks()
        let whole = read([chunks.flatMap { $0 }])
        let pieces = read(chunks)
        require(whole == pieces, "\(pieces) in pieces, \(whole) whole")
        let heads = whole.events.filter { if case .head = $0 { true } else { false } }
        require(heads.count <= 1, "\(heads.count) final heads")
        let kept = whole.events.reduce(0) { if case .body(let bytes) = $1 { $0 + bytes.count } else { $0 } }
        require(kept <= HandshakeAnswerReader.bodyLimit, "a refusal kept \(kept) bytes")
        guard case .head(101, let headers)? = heads.first else { return }
        let handshake = WebSocketHandshake(options: options, key: key)
        guard let agreement = try? handshake.agreement(with: Response(statusCode: 101, headers: headers)) else {
            return
        }
        require(
            agreement.subprotocol.map(options.subprotocols.contains) ?? true,
            "agreed to \(agreement.subprotocol ?? "") of \(options.subprotocols)")
        if let compression = agreement.compression {
            require(handshake.offersCompression, "agreed to compression that was not offered")
            require(
                (8...15).contains(compression.clientMaxWindowBits)
                    && (8...15).contains(compression.serverMaxWindowBits),
                "window bits \(compression)")
        }
    }

    /// What the answer came to: its events (a refusal's body joined into one, as it is cut
    /// wherever the pieces were), the peer's bytes after a `101` (as the socket would deliver
    /// them), and the failure that ended it.
    private struct Reading: Equatable {
        var events: [HandshakeAnswerReader.Event] = []
        var upgradedBytes: [UInt8] = []
        var failure: HandshakeAnswerReader.Failure?

        mutating func append(_ event: HandshakeAnswerReader.Event) {
            switch (events.last, event) {
            case (.body(let before)?, .body(let more)): events[events.count - 1] = .body(before + more)
            case (_, .upgraded(let bytes)): upgradedBytes += bytes
            default: events.append(event)
            }
        }
    }

    private static func read(_ chunks: [[UInt8]]) -> Reading {
        var reader = HandshakeAnswerReader()
        var reading = Reading()
        do throws(HandshakeAnswerReader.Failure) {
            for chunk in chunks {
                if reader.isUpgraded {
                    reading.upgradedBytes += chunk
                    continue
                }
                for event in try reader.take(Data(chunk)) { reading.append(event) }
                if reading.events.last == .ended { return reading }
            }
            for event in try reader.takeEnd() { reading.append(event) }
        } catch {
            reading.failure = error
        }
        return reading
    }
}
