import Foundation

/// `CLOCK_MONOTONIC`, which on Linux is one clock for every process of the machine: the event
/// server writes its reading into each event (`time.monotonic_ns()`), the consumer reads it again
/// as the event reaches it, and the difference is the event's latency from send to consumer.
enum Monotonic {
    static func nanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    /// `NS` from an event's data `{"n":K,"t":NS}`, as `sse_server.py` sends it.
    static func sendingTime(in data: String) -> Int64? {
        guard let field = data.range(of: #""t":"#), data.hasSuffix("}") else { return nil }
        return Int64(data[field.upperBound...].dropLast())
    }
}
