import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A TCP proxy on loopback that relays each connection to one server and breaks some of them
/// on the way: latency, throughput caps, stalls, resets mid-body, half-closed connections, and
/// the close of keep-alive connections left idle, as a server's keep-alive timeout does. One
/// thread polls every connection, so latency delays each piece without holding up the next.
///
/// Each listener is its own port (so its own host to a client's connection pool), with its own
/// mix of faults; a listener that reads directives takes a connection's plan from the query of
/// its first request line instead (``FaultPlan/init(requestLine:)``).
final class FaultProxy: Sendable {
    /// One port of the proxy and what its connections suffer.
    struct Listener: Sendable {
        var name: String
        /// Faults drawn for each connection accepted; `nil` for none but those named.
        var mix: FaultMix?
        /// Seconds a connection that was not upgraded may sit idle before the proxy closes it.
        var idleLimit: Double?
        /// Whether the first request line may name the connection's plan.
        var readsDirectives = false
    }

    /// The ports of the listeners, in order.
    let ports: [UInt16]
    let stats: ProxyStats
    private let wakeWriter: Int32

    /// Starts relaying to 127.0.0.1:`serverPort`; faults drawn from `seed`.
    init(serverPort: UInt16, listeners: [Listener], seed: UInt64) throws {
        let opened = try listeners.map { _ in try ProxySocket.listener() }
        let wake = try ProxySocket.wakePipe()
        ports = opened.map(\.port)
        wakeWriter = wake.write
        let stats = ProxyStats(names: listeners.map(\.name))
        self.stats = stats
        let descriptors = opened.map(\.descriptor)
        let thread = Thread {
            var loop = ProxyLoop(
                serverPort: serverPort, listeners: Array(zip(descriptors, listeners)), wake: wake.read, stats: stats,
                random: SoakRandom(seed: seed))
            loop.run()
        }
        thread.name = "ErrandBenchmarks.soak.proxy"
        thread.start()
    }

    /// Stops relaying: every connection is dropped.
    func stop() {
        stats.stop()
        var byte: UInt8 = 1
        _ = write(wakeWriter, &byte, 1)
    }
}

/// The proxy's poll loop: accepts, relays and breaks connections until stopped.
private struct ProxyLoop {
    let serverPort: UInt16
    let listeners: [(descriptor: Int32, listener: FaultProxy.Listener)]
    let wake: Int32
    let stats: ProxyStats
    var random: SoakRandom
    private var connections: [ProxyConnection] = []
    private var buffer = [UInt8](repeating: 0, count: 64 << 10)

    init(
        serverPort: UInt16, listeners: [(Int32, FaultProxy.Listener)], wake: Int32, stats: ProxyStats,
        random: SoakRandom
    ) {
        self.serverPort = serverPort
        self.listeners = listeners.map { (descriptor: $0.0, listener: $0.1) }
        self.wake = wake
        self.stats = stats
        self.random = random
    }

    mutating func run() {
        while !stats.isStopped {
            let now = DispatchTime.now().uptimeNanoseconds
            var deadline = now + 1_000_000_000
            for connection in connections {
                connection.service(now: now, deadline: &deadline, stats: stats)
            }
            retireFinished()
            var descriptors = [pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
            descriptors += listeners.map { pollfd(fd: $0.descriptor, events: Int16(POLLIN), revents: 0) }
            for connection in connections {
                let clientEvents = connection.clientEvents
                let serverEvents = connection.serverEvents
                descriptors.append(
                    pollfd(fd: clientEvents == 0 ? -1 : connection.client, events: clientEvents, revents: 0))
                descriptors.append(
                    pollfd(fd: serverEvents == 0 ? -1 : connection.server, events: serverEvents, revents: 0))
            }
            let wait = Int32(min(1000, (deadline &- min(deadline, now) + 999_999) / 1_000_000))
            guard poll(&descriptors, nfds_t(descriptors.count), wait) >= 0 || errno == EINTR else { break }
            handle(descriptors)
        }
        connections.forEach { $0.drop() }
        listeners.forEach { close($0.descriptor) }
        close(wake)
    }

    private mutating func handle(_ descriptors: [pollfd]) {
        let now = DispatchTime.now().uptimeNanoseconds
        let ready = Int16(POLLIN | POLLHUP | POLLERR)
        for (index, entry) in listeners.enumerated() where descriptors[1 + index].revents & Int16(POLLIN) != 0 {
            accept(entry.descriptor, listener: index, now: now)
        }
        let base = 1 + listeners.count
        // Only the connections polled: those accepted just now come after them.
        for (index, connection) in connections.enumerated() where base + 2 * index + 1 < descriptors.count {
            let client = descriptors[base + 2 * index].revents
            let server = descriptors[base + 2 * index + 1].revents
            if connection.isConnecting, server != 0 {
                connection.connected(stats: stats)
            } else {
                if server & Int16(POLLOUT) != 0 { connection.toServer.writeBlocked = false }
                if server & ready != 0 { connection.read(fromClient: false, into: &buffer, now: now, stats: stats) }
            }
            if client & Int16(POLLOUT) != 0 { connection.toClient.writeBlocked = false }
            if client & ready != 0 { connection.read(fromClient: true, into: &buffer, now: now, stats: stats) }
        }
    }

    private mutating func accept(_ descriptor: Int32, listener: Int, now: UInt64) {
        let config = listeners[listener].listener
        while let client = ProxySocket.accept(descriptor) {
            guard let server = ProxySocket.connect(port: serverPort) else {
                ProxySocket.reset(client)
                continue
            }
            connections.append(
                ProxyConnection(
                    listener: listener, client: client, server: server, mix: config.mix,
                    random: SoakRandom(seed: random.next()), idleLimit: config.idleLimit,
                    readsDirectives: config.readsDirectives, now: now))
            stats.update(listener) { $0.accepted += 1 }
        }
    }

    private mutating func retireFinished() {
        guard connections.contains(where: \.isFinished) else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        for connection in connections where connection.isFinished {
            let ending = connection.ending ?? .client
            stats.update(connection.listener) { report in
                report.endings[ending.rawValue, default: 0] += 1
                guard connection.isUpgraded, ending == .client else { return }
                report.clientEnds.append(
                    .init(label: connection.label, age: Double(now - connection.openedAt) / 1e9))
                if report.clientEnds.count > 500 { report.clientEnds.removeFirst() }
            }
        }
        connections.removeAll(where: \.isFinished)
    }
}
