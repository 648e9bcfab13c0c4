import CErrandCurl
import Foundation

/// Everything the curl thread waits for, as one descriptor (epoll on Linux): libcurl's sockets,
/// which it adds and removes as it goes (`CURLMOPT_SOCKETFUNCTION`), the WebSocket connections
/// the loop drives itself, and the wake-up other threads use. The loop then waits on that one
/// descriptor and acts on what is ready (`curl_multi_socket_action`): a turn costs nothing per
/// quiet connection, where a `poll(2)` list of every socket, and libcurl's walk over every
/// handle, cost a look at each. `nil` where the platform has none; the loop then uses
/// `curl_multi_perform` and `curl_multi_poll`.
final class CurlSocketWatch: Sendable {
    /// What a ready token stands for.
    enum Readiness {
        /// One of libcurl's sockets, with what happened as `CURL_CSELECT_*` bits.
        case libcurl(descriptor: Int32, events: Int32)
        /// A WebSocket connection of the loop's, by request id.
        case socket(id: Int)

        init(_ token: UInt64) {
            guard token & ERRAND_CURL_SOCKET_TOKEN != 0 else {
                self = .socket(id: Int(truncatingIfNeeded: token))
                return
            }
            self = .libcurl(
                descriptor: Int32(truncatingIfNeeded: token & 0xFFFF_FFFF),
                events: Int32(truncatingIfNeeded: (token >> 32) & 0xFF))
        }
    }

    private let descriptor: Int32
    private let wakeDescriptor: Int32
    /// The state libcurl's socket and timer callbacks keep, by address: used on the curl thread
    /// only, and freed after the multi handle, whose cleanup may still call them.
    private let libcurlEvents: Int

    /// The most ready sockets taken in one turn; the others stay ready for the next.
    static let batchSize = 256

    /// Watches `multi`'s sockets from now on; `nil` where the platform has no epoll.
    init?(multi: UnsafeMutableRawPointer) {
        var wake: Int32 = -1
        descriptor = errand_socket_watch_create(&wake)
        wakeDescriptor = wake
        guard descriptor >= 0 else { return nil }
        guard let events = errand_curl_multi_watch(multi, descriptor) else {
            errand_socket_watch_close(descriptor, wakeDescriptor)
            return nil
        }
        libcurlEvents = Int(bitPattern: events)
    }

    deinit {
        errand_curl_multi_unwatch(UnsafeMutableRawPointer(bitPattern: libcurlEvents))
        errand_socket_watch_close(descriptor, wakeDescriptor)
    }

    /// Wakes the curl thread, from any thread.
    func wake() {
        errand_socket_watch_wake(wakeDescriptor)
    }

    /// On the curl thread: milliseconds until libcurl wants its timeout acted on, 0 when it is
    /// due, -1 when it wants none.
    var libcurlTimeoutMilliseconds: Int {
        Int(errand_curl_timer_milliseconds(UnsafeMutableRawPointer(bitPattern: libcurlEvents)))
    }

    /// On the curl thread: whether libcurl's timeout is due, which it then no longer is until
    /// libcurl sets it again.
    func takeLibcurlTimeoutIfDue() -> Bool {
        errand_curl_timer_take_due(UnsafeMutableRawPointer(bitPattern: libcurlEvents)) == 1
    }

    /// On the curl thread: has the connections `easy` opens leave the watch as they close. An
    /// idle connection's socket stays in the set between requests; closing it alone would not
    /// take it out when a child process inherited the descriptor.
    func watchCloses(of easy: UnsafeMutableRawPointer) {
        _ = errand_curl_watch_closes(easy, UnsafeMutableRawPointer(bitPattern: libcurlEvents))
    }

    /// On the curl thread: hands `multi` its socket `descriptor`, ready for `events`
    /// (`CURL_CSELECT_*` bits), unless libcurl no longer wants it; then it leaves the watch.
    func libcurlSocketReady(_ multi: UnsafeMutableRawPointer, descriptor: Int32, events: Int32) {
        var running: Int32 = 0
        _ = errand_curl_socket_ready(
            multi, UnsafeMutableRawPointer(bitPattern: libcurlEvents), descriptor, events, &running)
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

    /// On the curl thread: the tokens of what is ready (see ``Readiness``), waiting at most
    /// `milliseconds` for something or a wake; `tokens` is the caller's buffer, reused every
    /// turn, whose size bounds how many are taken in one.
    func ready(waitingAtMost milliseconds: Int32, into tokens: inout [UInt64]) -> ArraySlice<UInt64> {
        let count = tokens.withUnsafeMutableBufferPointer {
            errand_socket_watch_ready(descriptor, wakeDescriptor, $0.baseAddress, Int32($0.count), milliseconds)
        }
        return tokens.prefix(Int(max(count, 0)))
    }
}
