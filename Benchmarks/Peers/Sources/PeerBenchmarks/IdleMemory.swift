import Foundation

/// Resident memory per open, idle socket, in a process of its own per client: 1,000 sockets
/// with permessage-deflate offered, beyond what the process held with one socket open.
enum IdleMemory {
    static let sockets = 1_000

    static func measure(client: String, url: String) async throws -> Double {
        switch client {
        case "errand":
            let errand = ErrandClient()
            let first = try await errand.openIdle(url: url, count: 1)
            let before = residentKiB()
            let held = try await errand.openIdle(url: url, count: sockets)
            let after = residentKiB()
            withExtendedLifetime((first, held)) {}
            return Double(after - before) * 1024 / Double(sockets)
        case "nio":
            let nio = NIOClient()
            try await waitForOpen(1) { nio.openIdle(url: url, count: 1, opened: $0) }
            let before = residentKiB()
            try await waitForOpen(sockets) { nio.openIdle(url: url, count: sockets, opened: $0) }
            let after = residentKiB()
            return Double(after - before) * 1024 / Double(sockets)
        default:
            throw PeerError("no client called \(client)")
        }
    }

    /// Runs `open`, returning once its sockets all called the closure it was given.
    private static func waitForOpen(_ count: Int, _ open: (@escaping @Sendable () -> Void) -> Void) async throws {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let counter = Counter(target: count) { continuation.resume() }
            open { counter.increment() }
        }
    }

    /// `VmRSS` of this process, in KiB.
    static func residentKiB() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        }
        return 0
    }
}
