import Foundation

/// The open-descriptor limit (`RLIMIT_NOFILE`). Every open stream is a socket in the client and
/// another in the server: each process holds N of them, beyond what it holds anyway, so each
/// needs N + ``slack``. The soft limit is raised to the hard one in this process; the children
/// (the server, the measuring copies of this executable) inherit it.
enum FileLimit {
    /// Descriptors besides the streams: standard I/O, pipes, epoll and event descriptors, the
    /// event loops' own, loaded libraries.
    static let slack = 256

    /// Raises the soft limit to the hard limit; both, as they are after.
    @discardableResult
    static func raise() -> (soft: Int, hard: Int) {
        #if os(Linux)
            let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
            let resource = RLIMIT_NOFILE
        #endif
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return (0, 0) }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(resource, &raised) == 0 { limit = raised }
        }
        // Unlimited (all bits set) clamps to Int.max.
        return (Int(clamping: limit.rlim_cur), Int(clamping: limit.rlim_max))
    }

    /// Descriptors this process has open now.
    static func openDescriptors() -> Int {
        // Less the one the listing itself opens.
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 1) - 1
    }
}
