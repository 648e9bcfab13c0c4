import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One client's connection through the fault proxy, and the server connection it is relayed to.
/// Lives on the proxy's thread alone.
final class ProxyConnection {
    let listener: Int
    let client: Int32
    let server: Int32
    let openedAt: UInt64
    private(set) var plan = FaultPlan.clean
    /// Where the next plan comes from once this one has run its course; `nil` for a named plan.
    private var mix: FaultMix?
    private var random: SoakRandom
    /// Bytes to the client after which a plan without an event gives way to the next.
    private var windowEnd = Int.max
    private let idleLimit: UInt64?
    private let readsDirectives: Bool

    /// Client to server, and server to client.
    var toServer = ProxyPipe()
    var toClient = ProxyPipe()
    /// Until the server connection is made, nothing is written to it.
    var isConnecting = true
    /// The server answered `101`: a WebSocket, which no idle limit closes.
    private(set) var isUpgraded = false
    /// From the handshake's `soak=` query item, for the report of who ended which socket.
    private(set) var label = ""
    /// Set once a fault half-closed the connection: the client's bytes are read and dropped.
    private(set) var halfClosedAt: UInt64?
    private(set) var ending: ListenerReport.Ending?
    private(set) var isFinished = false
    private var stalledUntil: UInt64 = 0
    private var eventDone = false
    private var lastActivity: UInt64
    private var firstEndAt: UInt64?
    private var sniffedRequest: [UInt8] = []
    private var sniffedResponse = false
    private var isServerClosed = false

    /// A one-sided end waits this long for the other side before the connection is dropped.
    private static let lingerLimit: UInt64 = 30_000_000_000

    init(
        listener: Int, client: Int32, server: Int32, mix: FaultMix?, random: SoakRandom, idleLimit: Double?,
        readsDirectives: Bool, now: UInt64
    ) {
        self.listener = listener
        self.client = client
        self.server = server
        self.mix = mix
        self.random = random
        self.idleLimit = idleLimit.map { UInt64($0 * 1e9) }
        self.readsDirectives = readsDirectives
        openedAt = now
        lastActivity = now
        redraw(forwarded: 0)
    }

    /// The next plan of the mix, its bytes counted from `forwarded`: one connection that lives
    /// long, as a pooled one does, meets fault after fault.
    private func redraw(forwarded: Int) {
        guard let mix else { return }
        plan = mix.draw(&random)
        eventDone = false
        if let after = plan.event?.afterBytes {
            plan.event?.afterBytes = forwarded + after
            windowEnd = Int.max
        } else {
            windowEnd = forwarded + random.int(in: mix.bytes)
        }
    }

    var isStalled: Bool { stalledUntil > DispatchTime.now().uptimeNanoseconds }

    /// What poll(2) should watch for on each side.
    var clientEvents: Int16 {
        var events: Int16 = 0
        if toServer.wantsToRead || halfClosedAt != nil { events |= Int16(POLLIN) }
        if toClient.writeBlocked { events |= Int16(POLLOUT) }
        return events
    }

    var serverEvents: Int16 {
        guard !isServerClosed else { return 0 }
        if isConnecting { return Int16(POLLOUT) }
        var events: Int16 = 0
        if toClient.wantsToRead { events |= Int16(POLLIN) }
        if toServer.writeBlocked { events |= Int16(POLLOUT) }
        return events
    }

    // MARK: Time

    /// Runs what is due at `now` — timed faults, the end of a stall, writes whose latency has
    /// passed, the idle limit — and lowers `deadline` to when something next falls due.
    func service(now: UInt64, deadline: inout UInt64, stats: ProxyStats) {
        guard !isFinished else { return }
        if let event = plan.event, !eventDone, let at = event.atSeconds {
            let due = openedAt + UInt64(at * 1e9)
            if now >= due {
                trigger(event, now: now, stats: stats)
                if isFinished { return }
            } else {
                deadline = min(deadline, due)
            }
        }
        if stalledUntil > now {
            deadline = min(deadline, stalledUntil)
        } else {
            if !isConnecting { flush(toServer: true, now: now, deadline: &deadline, stats: stats) }
            if !isFinished { flush(toServer: false, now: now, deadline: &deadline, stats: stats) }
        }
        guard !isFinished else { return }
        checkEnds(now: now, deadline: &deadline)
    }

    private func checkEnds(now: UInt64, deadline: inout UInt64) {
        if let halfClosedAt {
            if now >= halfClosedAt + Self.lingerLimit { finish(.fault) }
            deadline = min(deadline, halfClosedAt + Self.lingerLimit)
            return
        }
        if toServer.isDone && toClient.isDone { return finish(ending ?? .client) }
        if let firstEndAt {
            if now >= firstEndAt + Self.lingerLimit { return finish(ending ?? .client) }
            deadline = min(deadline, firstEndAt + Self.lingerLimit)
        }
        if let idleLimit, !isUpgraded, firstEndAt == nil, stalledUntil <= now, toServer.isDrained,
            toClient.isDrained, !isConnecting
        {
            if now >= lastActivity + idleLimit {
                // As a server's keep-alive timeout closes: a FIN, then the close.
                ProxySocket.finishWriting(client)
                return finish(.idle)
            }
            deadline = min(deadline, lastActivity + idleLimit)
        }
    }

    // MARK: Bytes

    /// Reads what a side has for the other; notes its end.
    func read(fromClient: Bool, into buffer: inout [UInt8], now: UInt64, stats: ProxyStats) {
        guard !isFinished else { return }
        let count = ProxySocket.read(fromClient ? client : server, into: &buffer)
        switch count {
        case -1:
            return
        case -2:
            // A reset: pass it on.
            noteEnd(fromClient ? .client : .server, now: now)
            abort(resetting: true)
        case 0:
            if fromClient {
                toServer.sourceEnded = true
                if halfClosedAt != nil { return finish(.fault) }
            } else {
                toClient.sourceEnded = true
            }
            noteEnd(fromClient ? .client : .server, now: now)
        default:
            lastActivity = now
            let bytes = Data(buffer[0..<count])
            if fromClient {
                guard halfClosedAt == nil else { return }
                sniffRequest(bytes)
                toServer.append(bytes, due: now + UInt64(plan.latency * 1e9))
            } else {
                sniffResponse(bytes, stats: stats)
                toClient.append(bytes, due: now + UInt64(plan.latency * 1e9))
            }
            stats.update(listener) {
                if fromClient { $0.bytesToServer += count } else { $0.bytesToClients += count }
            }
        }
    }

    /// The server connection is made, or failed.
    func connected(stats: ProxyStats) {
        isConnecting = false
        if ProxySocket.connectFailed(server) {
            noteEnd(.server, now: DispatchTime.now().uptimeNanoseconds)
            abort(resetting: true)
        }
    }

    private func flush(toServer: Bool, now: UInt64, deadline: inout UInt64, stats: ProxyStats) {
        var pipe = toServer ? self.toServer : self.toClient
        defer {
            if toServer { self.toServer = pipe } else { self.toClient = pipe }
        }
        let destination = toServer ? server : client
        guard !pipe.writeBlocked else { return }
        while true {
            var limit = Int.max
            if !toServer, let event = plan.event, !eventDone, let after = event.afterBytes {
                guard after > pipe.forwarded else {
                    if toServer { self.toServer = pipe } else { self.toClient = pipe }
                    trigger(event, now: now, stats: stats)
                    pipe = toServer ? self.toServer : self.toClient
                    if isFinished || isStalled { return }
                    continue
                }
                limit = after - pipe.forwarded
            }
            let next = pipe.nextWrite(now: now, bytesPerSecond: toServer ? nil : plan.bytesPerSecond, limit: limit)
            if let retryAt = next.retryAt { deadline = min(deadline, retryAt) }
            guard let bytes = next.bytes else { break }
            let written = ProxySocket.write(destination, bytes)
            if written > 0 {
                pipe.consumed(written)
                lastActivity = now
                if !toServer, pipe.forwarded >= windowEnd { redraw(forwarded: pipe.forwarded) }
            } else if written == -1 {
                pipe.writeBlocked = true
                return
            } else {
                // The destination is gone: its side ended the connection.
                if toServer { self.toServer = pipe } else { self.toClient = pipe }
                noteEnd(toServer ? .server : .client, now: now)
                abort(resetting: true)
                pipe = toServer ? self.toServer : self.toClient
                return
            }
        }
        if pipe.isDrained, pipe.sourceEnded, !pipe.destinationShut {
            ProxySocket.finishWriting(destination)
            pipe.destinationShut = true
        }
    }

    // MARK: Faults

    private func trigger(_ event: FaultPlan.Event, now: UInt64, stats: ProxyStats) {
        eventDone = true
        stats.update(listener) { $0.faults[event.kind.rawValue, default: 0] += 1 }
        switch event.kind {
        case .reset:
            noteEnd(.fault, now: now)
            abort(resetting: true)
        case .halfClose:
            noteEnd(.fault, now: now)
            ProxySocket.finishWriting(client)
            close(server)
            isServerClosed = true
            toClient.discard()
            toClient.sourceEnded = true
            toClient.destinationShut = true
            toServer.discard()
            halfClosedAt = now
        case .stall:
            stalledUntil = now + UInt64(event.duration * 1e9)
            redraw(forwarded: toClient.forwarded)
        }
    }

    // MARK: Ends

    private func noteEnd(_ side: ListenerReport.Ending, now: UInt64) {
        if ending == nil { ending = side }
        if firstEndAt == nil { firstEndAt = now }
    }

    /// Drops both sides at once with resets, as the proxy stops.
    func drop() {
        abort(resetting: true)
    }

    /// Drops both sides at once, with resets when `resetting`.
    private func abort(resetting: Bool) {
        finish(ending ?? .client, resetting: resetting)
    }

    private func finish(_ how: ListenerReport.Ending, resetting: Bool = false) {
        guard !isFinished else { return }
        isFinished = true
        if ending == nil { ending = how }
        if resetting {
            ProxySocket.reset(client)
            if !isServerClosed { ProxySocket.reset(server) }
        } else {
            close(client)
            if !isServerClosed { close(server) }
        }
        isServerClosed = true
    }

    /// The first request line: the socket's label, and the plan it names where directives are read.
    private func sniffRequest(_ bytes: Data) {
        guard sniffedRequest.count < 8192, !sniffedRequest.contains(10) else { return }
        sniffedRequest += bytes.prefix(8192 - sniffedRequest.count)
        guard let end = sniffedRequest.firstIndex(of: 10) else { return }
        let line = String(decoding: sniffedRequest[..<end], as: UTF8.self)
        if readsDirectives, let named = FaultPlan(requestLine: line) {
            plan = named
            mix = nil
            windowEnd = Int.max
        }
        if let range = line.range(of: "soak=") {
            label = String(line[range.upperBound...].prefix { $0 != "&" && $0 != " " })
        }
    }

    private func sniffResponse(_ bytes: Data, stats: ProxyStats) {
        guard !sniffedResponse else { return }
        sniffedResponse = true
        if bytes.starts(with: Data("HTTP/1.1 101".utf8)) {
            isUpgraded = true
            stats.update(listener) { $0.upgraded += 1 }
        }
    }
}
