import Dispatch
import Foundation

/// Hands one request's events to its consumer in order, one at a time, off libcurl's thread,
/// and counts the body bytes handed over but not yet consumed, so that the transfer can pause
/// while the consumer is behind instead of piling the body up in memory.
///
/// It also runs the request's work that must not block libcurl's thread — cookie storage,
/// following a redirect — in order with its events.
final class CurlEventMailbox: Sendable {
    fileprivate enum Item {
        case event(TransportEvent)
        case work(@Sendable () -> Void)

        var isBody: Bool {
            if case .event(.body) = self { true } else { false }
        }
    }

    /// What the curl thread may deliver itself, without a hand-off to another thread.
    enum DirectDelivery: Sendable {
        /// Nothing: every event runs off the curl thread.
        case none
        /// Body chunks: a WebSocket's, whose reader only decodes them and hands messages on.
        case bodies
        /// Every event, not work: an `async` caller's, which only records them (``DirectDeliveryTransport``).
        case events

        fileprivate func covers(_ item: Item) -> Bool {
            switch self {
            case .none: false
            case .bodies: item.isBody
            case .events: if case .event = item { true } else { false }
            }
        }
    }

    private struct State {
        var events: (@Sendable (TransportEvent) -> Void)?
        var items: [Item] = []
        var isDraining = false
        /// `.completed` was posted: nothing more is accepted.
        var isClosed = false
        /// Body bytes accepted whose event has not returned yet.
        var unconsumedBytes = 0
        /// The most `unconsumedBytes` ever reached.
        var highWaterMark = 0
        /// The transfer paused itself and waits to be told to resume.
        var wantsResume = false
        /// The consumer asked for no more body until it says so: it buffers what it was handed.
        var isHeld = false
    }

    private let state: Locked<State>
    /// Bytes not yet consumed beyond which the transfer pauses; it resumes below half of it.
    private let pauseThreshold: Int
    /// Asks the transfer to resume, once the consumer caught up.
    private let resume: @Sendable () -> Void
    /// Which of the consumer's events may run on the curl thread.
    let directDelivery: DirectDelivery

    /// Told once, when `.completed` is posted, the most body bytes the consumer ever had waiting.
    private let closed: @Sendable (_ highWaterMark: Int) -> Void

    init(
        pauseThreshold: Int, directDelivery: DirectDelivery = .none,
        events: @escaping @Sendable (TransportEvent) -> Void,
        resume: @escaping @Sendable () -> Void, closed: @escaping @Sendable (_ highWaterMark: Int) -> Void
    ) {
        self.pauseThreshold = pauseThreshold
        self.directDelivery = directDelivery
        self.resume = resume
        self.closed = closed
        state = Locked(State(events: events))
    }

    /// Whether `.completed` was posted, by the transfer or a cancellation.
    var isClosed: Bool { state[\.isClosed] }

    /// Posts a body chunk unless the consumer is too far behind; then `false`, and the transfer
    /// pauses until `resume` is called. On the curl thread: delivery starts with `batch`.
    func postBody(_ bytes: UnsafeRawBufferPointer, batch: CurlDrainBatch) -> Bool {
        postBody(count: bytes.count, batch: batch) { Data(bytes) }
    }

    /// Posts a chunk already copied out of libcurl's buffer, as ``postBody(_:batch:)-(UnsafeRawBufferPointer,_)`` does.
    func postBody(_ bytes: Data, batch: CurlDrainBatch) -> Bool {
        postBody(count: bytes.count, batch: batch) { bytes }
    }

    /// Posts the pieces `decode` makes of raw body bytes unless the consumer is too far behind;
    /// then `false`, `decode` is not called, and libcurl hands the same bytes over again later.
    func postBody(batch: CurlDrainBatch, decoding decode: () -> [Data]) -> Bool {
        let hasRoom = state.withLock { state -> Bool in
            guard !state.isClosed else { return true }
            guard state.unconsumedBytes < pauseThreshold, !state.isHeld else {
                state.wantsResume = true
                return false
            }
            return true
        }
        guard hasRoom else { return false }
        for piece in decode() where !piece.isEmpty {
            _ = postBody(count: piece.count, batch: batch, forced: true) { piece }
        }
        return true
    }

    /// Copies the chunk (`chunk`) only once it is accepted; `forced`, it is accepted whatever
    /// the consumer's lag, as bytes already taken from libcurl must be.
    private func postBody(count: Int, batch: CurlDrainBatch, forced: Bool = false, _ chunk: () -> Data) -> Bool {
        let accepted = state.withLock { state -> Bool in
            if state.isClosed { return true }
            guard forced || (state.unconsumedBytes < pauseThreshold && !state.isHeld) else {
                state.wantsResume = true
                return false
            }
            state.unconsumedBytes += count
            state.highWaterMark = max(state.highWaterMark, state.unconsumedBytes)
            return true
        }
        if accepted { post(.event(.body(chunk())), batch: batch) }
        return accepted
    }

    /// Posts an event; `.completed` closes the mailbox. From the curl thread, pass its `batch`:
    /// delivery then starts when the loop's turn ends; from any other, it starts at once.
    func post(_ event: TransportEvent, batch: CurlDrainBatch? = nil) {
        post(.event(event), batch: batch)
    }

    /// Runs `work` in order with the events; dropped when the mailbox was already closed.
    func perform(batch: CurlDrainBatch? = nil, _ work: @escaping @Sendable () -> Void) {
        post(.work(work), batch: batch)
    }

    /// Posts `.completed(error)` unless already closed; `true` when this call closed it.
    @discardableResult
    func close(with error: ErrandError?, batch: CurlDrainBatch? = nil) -> Bool {
        post(.event(.completed(error)), batch: batch)
    }

    @discardableResult
    private func post(_ item: Item, batch: CurlDrainBatch?) -> Bool {
        let (startDrain, closedAt) = state.withLock { state -> (Bool?, Int?) in
            guard !state.isClosed else { return (nil, nil) }
            var closedAt: Int?
            if case .event(.completed) = item {
                state.isClosed = true
                closedAt = state.highWaterMark
            }
            // A small response's head, body, metrics and completion, without growing the array thrice.
            if state.items.isEmpty { state.items.reserveCapacity(4) }
            state.items.append(item)
            defer { state.isDraining = true }
            return (!state.isDraining, closedAt)
        }
        guard let startDrain else { return false }
        if let closedAt { closed(closedAt) }
        if startDrain {
            if let batch { batch.add(self) } else { CurlDrainBatch.deliveries.async { self.drain() } }
        }
        return true
    }

    /// Delivers what was posted, in order, until nothing is left. Off the curl thread; or on it
    /// (`onCurlThread`) for what its ``directDelivery`` covers, stopping before anything else,
    /// returning `false`: the rest is then to be drained elsewhere.
    @discardableResult
    func drain(onCurlThread: Bool = false) -> Bool {
        while true {
            let taken = state.withLock { state -> ([Item], (@Sendable (TransportEvent) -> Void)?)? in
                if onCurlThread, !state.items.allSatisfy(directDelivery.covers) { return nil }
                // Handed over whole: emptying it in place would copy what was just returned.
                defer { state.items = [] }
                if state.items.isEmpty { state.isDraining = false }
                return (state.items, state.events)
            }
            guard let (items, events) = taken else { return false }
            guard !items.isEmpty, let events else { return true }
            for item in items {
                deliver(item, to: events)
            }
        }
    }

    private func deliver(_ item: Item, to events: @Sendable (TransportEvent) -> Void) {
        switch item {
        case .work(let work):
            work()
        case .event(let event):
            events(event)
            switch event {
            case .body(let chunk): consumed(chunk.count)
            // Nothing follows the completion: let go of the consumer and what it holds.
            case .completed: state.withLock { $0.events = nil }
            default: break
            }
        }
    }

    /// Holds the body back (`true`) until released (`false`), whatever the consumer has waiting:
    /// the consumer keeps a buffer of its own, as a ``ResponseStream`` does.
    func hold(_ isHeld: Bool) {
        let resumeNow = state.withLock { state -> Bool in
            state.isHeld = isHeld
            return Self.takeResume(&state, pauseThreshold: pauseThreshold)
        }
        if resumeNow { resume() }
    }

    private func consumed(_ count: Int) {
        let resumeNow = state.withLock { state -> Bool in
            state.unconsumedBytes -= count
            return Self.takeResume(&state, pauseThreshold: pauseThreshold)
        }
        if resumeNow { resume() }
    }

    /// Whether a paused transfer may resume now; it then no longer waits to be told.
    private static func takeResume(_ state: inout State, pauseThreshold: Int) -> Bool {
        guard state.wantsResume, !state.isHeld, state.unconsumedBytes <= pauseThreshold / 2 else { return false }
        state.wantsResume = false
        return true
    }
}
