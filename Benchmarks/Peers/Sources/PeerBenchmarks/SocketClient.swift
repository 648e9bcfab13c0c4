import Foundation

/// One WebSocket client under test: the same four workloads, written the way its documentation
/// shows. Each returns once its messages all arrived.
protocol SocketClient: Sendable {
    var name: String { get }
    /// `count` 64-byte text messages sent one at a time, each awaiting its echo; the latencies.
    func roundTrips(url: String, count: Int) async throws -> [Duration]
    /// Reads `count` 1 KiB binary messages the server floods; `compressed` offers permessage-deflate.
    func receive(url: String, count: Int, compressed: Bool) async throws
    /// Opens `sockets` sockets to `url`, calls `allOpen`, and reads `messages` messages on each.
    func fanIn(url: String, sockets: Int, messages: Int, allOpen: @escaping @Sendable () -> Void) async throws
}

/// User plus system time of the whole process.
enum ProcessCPU {
    static func now() -> Duration {
        var usage = rusage()
        #if os(Linux)
            getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        #else
            getrusage(RUSAGE_SELF, &usage)
        #endif
        func duration(_ time: timeval) -> Duration {
            .seconds(Int64(time.tv_sec)) + .microseconds(Int64(time.tv_usec))
        }
        return duration(usage.ru_utime) + duration(usage.ru_stime)
    }
}

extension Duration {
    var microseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1e6 + Double(attoseconds) / 1e12
    }
}
