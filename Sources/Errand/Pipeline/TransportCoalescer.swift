import Foundation

/// Sends the pipeline's requests, sharing one transport call among identical requests in flight
/// (see ``BaseRequest/coalescesDuplicates``) and fanning the transport's events out to every caller.
///
/// Requests are identical when everything sent is: method, URL (query included), header fields
/// (credentials included) and timeouts, with no body. A caller joins only a call that has not yet
/// reported anything, so every caller sees the whole exchange from its head; a request that comes
/// later starts a call of its own. Each caller gets exactly one `.completed`: a caller that cancels
/// gets `.completed(.cancelled)` at once, and the call itself stops only when its last caller
/// cancels. An event already being fanned out may still reach a caller that cancelled meanwhile;
/// the pipeline ignores events for an attempt that is over. Callers whose events the transport
/// may deliver on its own thread (``DirectDeliveryTransport``) share calls only among themselves.
final class TransportCoalescer: Sendable {
    /// What makes two transport requests identical.
    private struct Key: Hashable {
        let method: String
        let url: URL
        let headers: [String: String]
        /// Which of them stay with their origin on a redirect.
        let credentialHeaders: Set<String>
        let timeoutInterval: Double
        let timeoutIntervalForResource: Double?
        let deliversDirectly: Bool

        /// `nil` for a request with a body: it is never shared.
        init?(_ request: TransportRequest, deliversDirectly: Bool) {
            guard request.body == nil, request.bodyFileURL == nil, request.bodyStream == nil else { return nil }
            method = request.method
            url = request.url
            headers = request.headers
            credentialHeaders = request.credentialHeaders
            timeoutInterval = request.timeoutInterval
            timeoutIntervalForResource = request.timeoutIntervalForResource
            self.deliversDirectly = deliversDirectly
        }

        /// The method and URL only: hashing every header field costs more than the lookup it
        /// serves, and requests for one URL rarely differ in headers alone. Equality compares all.
        func hash(into hasher: inout Hasher) {
            hasher.combine(method)
            hasher.combine(url.absoluteString)
        }
    }

    private typealias Events = @Sendable (TransportEvent) -> Void

    /// One call on the wire and the callers it reports to.
    private final class Flight: @unchecked Sendable {  // its fields are used only under the coalescer's lock
        let key: Key
        var callers: [(id: Int, events: Events)]
        var nextID = 1
        var transportTask: (any TransportTask)?
        /// The transport reported an event: nobody may join any more.
        var hasReported = false
        /// The transport reported `.completed`: there is nothing left to cancel.
        var isDone = false

        init(key: Key, first: @escaping Events) {
            self.key = key
            callers = [(0, first)]
        }
    }

    /// One caller's handle on a shared call: cancelling it detaches that caller only.
    private struct Call: TransportTask {
        let coalescer: TransportCoalescer
        let flight: Flight
        let id: Int

        func cancel() {
            coalescer.leave(flight, caller: id)
        }
    }

    private let transport: any Transport
    /// The transport, when it can deliver events on its own thread.
    private let directTransport: (any DirectDeliveryTransport)?
    /// The calls that have not yet reported anything, which a new caller may join.
    private let joinable = Locked<[Key: Flight]>([:])

    init(transport: any Transport) {
        self.transport = transport
        directTransport = transport as? any DirectDeliveryTransport
    }

    /// Sends `request`, or, when `coalescing`, joins an identical call that has not yet reported anything.
    /// - Parameters:
    ///   - deliversDirectly: Whether `events` may run on the transport's own thread, if it has one.
    ///   - joining: Runs when the caller joins another's call, before any of that call's events
    ///     can reach it: a caller gives up its slot there, so that an answer it retries at once
    ///     cannot take a new slot that the caller would then give up instead.
    /// - Returns: The caller's handle.
    func send(
        _ request: TransportRequest, coalescing: Bool, deliversDirectly: Bool, joining: () -> Void,
        events: @escaping @Sendable (TransportEvent) -> Void
    ) -> any TransportTask {
        guard coalescing, let key = Key(request, deliversDirectly: deliversDirectly) else {
            return send(request, deliversDirectly: deliversDirectly, events: events)
        }
        let (flight, id) = joinable.withLock { joinable -> (Flight, Int?) in
            if let flight = joinable[key] {
                joining()
                let id = flight.nextID
                flight.nextID += 1
                flight.callers.append((id, events))
                return (flight, id)
            }
            let flight = Flight(key: key, first: events)
            joinable[key] = flight
            return (flight, nil)
        }
        if let id { return Call(coalescer: self, flight: flight, id: id) }
        let transportTask = send(request, deliversDirectly: deliversDirectly) { [self] event in
            fanOut(event, of: flight)
        }
        let abandoned = joinable.withLock { _ -> Bool in
            flight.transportTask = transportTask
            return flight.callers.isEmpty && !flight.isDone
        }
        if abandoned { transportTask.cancel() }  // Every caller cancelled before the call was under way.
        return Call(coalescer: self, flight: flight, id: 0)
    }

    private func send(
        _ request: TransportRequest, deliversDirectly: Bool, events: @escaping @Sendable (TransportEvent) -> Void
    ) -> any TransportTask {
        guard deliversDirectly, let directTransport else { return transport.send(request, events: events) }
        return directTransport.send(request, deliversDirectly: true, events: events)
    }

    /// How many callers wait on calls that have not yet reported anything.
    var waitingCallers: Int {
        joinable.withLock { $0.values.reduce(0) { $0 + $1.callers.count } }
    }

    private func fanOut(_ event: TransportEvent, of flight: Flight) {
        let callers = joinable.withLock { joinable -> [(id: Int, events: Events)] in
            if !flight.hasReported {
                flight.hasReported = true
                if joinable[flight.key] === flight { joinable[flight.key] = nil }
            }
            guard case .completed = event else { return flight.callers }
            flight.isDone = true
            defer { flight.callers = [] }
            return flight.callers
        }
        for caller in callers {
            caller.events(event)
        }
    }

    /// Detaches one caller, which completes as cancelled; the call stops when it was the last.
    private func leave(_ flight: Flight, caller id: Int) {
        let left = joinable.withLock { joinable -> (events: Events, stop: (any TransportTask)?)? in
            guard let index = flight.callers.firstIndex(where: { $0.id == id }) else { return nil }
            let events = flight.callers.remove(at: index).events
            guard flight.callers.isEmpty else { return (events, nil) }
            if joinable[flight.key] === flight { joinable[flight.key] = nil }
            return (events, flight.transportTask)
        }
        guard let left else { return }
        left.stop?.cancel()
        left.events(.completed(.cancelled))
    }
}
