import CErrandCurl
import Foundation

/// The WebSocket connections the curl loop watches itself, as one descriptor (epoll on Linux):
/// `curl_multi_poll` then watches that one for all of them, and a turn of the loop costs nothing
/// per quiet socket, where a `poll(2)` list of every socket cost the kernel a look at each. `nil`
/// where the platform has none; the loop then hands each socket to the poll itself. Used on the
/// curl thread only.
final class CurlSocketWatch {
    /// What `curl_multi_poll` watches for readiness: readable when a watched socket is ready.
    let descriptor: Int32

    /// The most ready sockets taken in one turn; the others stay ready for the next.
    private static let batchSize = 256

    init?() {
        descriptor = errand_socket_watch_create()
        guard descriptor >= 0 else { return nil }
    }

    deinit {
        errand_socket_watch_close(descriptor)
    }

    /// Watches `socket` for what it waits for now, if that changed; `false` when the system refused.
    func update(_ socket: CurlSocket) -> Bool {
        let events = socket.pollEvents ?? 0
        guard events != socket.watchedEvents else { return true }
        let result = errand_socket_watch_set(
            descriptor, socket.descriptor, events, socket.watchedEvents == 0 ? 0 : 1, UInt64(socket.id))
        guard result == 0 else { return false }
        socket.watchedEvents = events
        return true
    }

    /// Stops watching `socket`, before its connection closes.
    func forget(_ socket: CurlSocket) {
        guard socket.watchedEvents != 0 else { return }
        _ = errand_socket_watch_set(descriptor, socket.descriptor, 0, 1, 0)
        socket.watchedEvents = 0
    }

    /// The ids of watched sockets that are ready, without waiting.
    func ready() -> [Int] {
        var tokens = [UInt64](repeating: 0, count: Self.batchSize)
        let count = tokens.withUnsafeMutableBufferPointer {
            errand_socket_watch_ready(descriptor, $0.baseAddress, Int32($0.count))
        }
        return tokens.prefix(Int(max(count, 0))).map { Int(truncatingIfNeeded: $0) }
    }
}
