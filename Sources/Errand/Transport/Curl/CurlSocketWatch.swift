import CErrandCurl
import Foundation

/// The WebSocket connections the curl loop watches itself, as one descriptor (epoll on Linux),
/// with the wake-up other threads use beside them. `curl_multi_poll` then watches that one
/// descriptor for all of them, and while libcurl has nothing to drive — only sockets open — the
/// loop waits on it alone: a turn costs nothing per quiet socket, where a `poll(2)` list of
/// every socket, and libcurl's walk over every handle, cost a look at each. `nil` where the
/// platform has none; the loop then hands each socket to the poll itself.
final class CurlSocketWatch: Sendable {
    /// What `curl_multi_poll` watches: readable when a watched socket is ready, or on a wake.
    let descriptor: Int32
    private let wakeDescriptor: Int32

    /// The most ready sockets taken in one turn; the others stay ready for the next.
    static let batchSize = 256

    init?() {
        var wake: Int32 = -1
        descriptor = errand_socket_watch_create(&wake)
        wakeDescriptor = wake
        guard descriptor >= 0 else { return nil }
    }

    deinit {
        errand_socket_watch_close(descriptor, wakeDescriptor)
    }

    /// Wakes the curl thread, from any thread.
    func wake() {
        errand_socket_watch_wake(wakeDescriptor)
    }

    /// On the curl thread: watches `socket` for what it waits for now, if that changed; `false`
    /// when the system refused.
    func update(_ socket: CurlSocket) -> Bool {
        let events = socket.pollEvents ?? 0
        guard events != socket.watchedEvents else { return true }
        let result = errand_socket_watch_set(
            descriptor, socket.descriptor, events, socket.watchedEvents == 0 ? 0 : 1, UInt64(socket.id))
        guard result == 0 else { return false }
        socket.watchedEvents = events
        return true
    }

    /// On the curl thread: stops watching `socket`, before its connection closes.
    func forget(_ socket: CurlSocket) {
        guard socket.watchedEvents != 0 else { return }
        _ = errand_socket_watch_set(descriptor, socket.descriptor, 0, 1, 0)
        socket.watchedEvents = 0
    }

    /// On the curl thread: the ids of watched sockets that are ready, waiting at most
    /// `milliseconds` for one or a wake; `tokens` is the caller's buffer, reused every turn,
    /// whose size bounds how many are taken in one.
    func ready(waitingAtMost milliseconds: Int32, into tokens: inout [UInt64]) -> ArraySlice<UInt64> {
        let count = tokens.withUnsafeMutableBufferPointer {
            errand_socket_watch_ready(descriptor, wakeDescriptor, $0.baseAddress, Int32($0.count), milliseconds)
        }
        return tokens.prefix(Int(max(count, 0)))
    }
}
