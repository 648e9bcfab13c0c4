import Foundation

/// One direction of a proxied connection: the bytes read from one side that wait, each piece
/// until its latency has passed, to be written to the other.
struct ProxyPipe {
    /// Pieces in arrival order, each with the time it may go out.
    private(set) var pieces: [(due: UInt64, bytes: Data)] = []
    private(set) var queuedBytes = 0
    /// The source sent its FIN.
    var sourceEnded = false
    /// The FIN has been passed on to the destination.
    var destinationShut = false
    /// The last write found the destination's buffer full: wait until it can take more.
    var writeBlocked = false
    /// Bytes written to the destination.
    private(set) var forwarded = 0
    /// Bytes the throughput cap still allows, and when it was last topped up.
    private var tokens = 0.0
    private var tokensAt: UInt64 = 0

    /// Reading stops past this much queued: the proxy pushes back as a slow network would.
    static let capacity = 1 << 20

    var wantsToRead: Bool { !sourceEnded && queuedBytes < Self.capacity }
    var isDrained: Bool { pieces.isEmpty }
    var isDone: Bool { sourceEnded && pieces.isEmpty && destinationShut }

    /// Queues `bytes`, due at `due`; a piece due within a millisecond of the last joins it.
    mutating func append(_ bytes: Data, due: UInt64) {
        queuedBytes += bytes.count
        if let last = pieces.last, last.due + 1_000_000 >= due {
            pieces[pieces.count - 1].bytes.append(bytes)
        } else {
            pieces.append((due, bytes))
        }
    }

    /// Drops everything queued, as a connection cut short does.
    mutating func discard() {
        pieces = []
        queuedBytes = 0
    }

    /// The next bytes that may be written at `now`, at most `limit`, or when to look again.
    mutating func nextWrite(now: UInt64, bytesPerSecond: Int?, limit: Int) -> (bytes: Data?, retryAt: UInt64?) {
        guard let first = pieces.first else { return (nil, nil) }
        guard first.due <= now else { return (nil, first.due) }
        var allowance = min(first.bytes.count, limit)
        if let rate = bytesPerSecond {
            let burst = Double(max(rate / 20, 4096))
            tokens = min(burst, tokens + Double(now &- tokensAt) / 1e9 * Double(rate))
            tokensAt = now
            guard tokens >= 1 else {
                // When a twentieth of a second's worth has built up.
                return (nil, now + UInt64(burst / Double(rate) * 1e9))
            }
            allowance = min(allowance, Int(tokens))
        }
        return (first.bytes.prefix(allowance), nil)
    }

    /// Notes that `count` bytes of the first piece were written.
    mutating func consumed(_ count: Int) {
        forwarded += count
        queuedBytes -= count
        tokens -= Double(count)
        // A slice, not a copy: a capped connection writes a large piece a few KiB at a time.
        let rest = pieces[0].bytes.dropFirst(count)
        if rest.isEmpty {
            pieces.removeFirst()
        } else {
            pieces[0].bytes = rest
        }
    }
}
