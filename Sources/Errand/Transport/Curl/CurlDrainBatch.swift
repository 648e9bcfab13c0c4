import Dispatch

/// The mailboxes the curl thread posted to during one turn of its loop, whose deliveries start
/// together once the turn ends: a small response's head, body and completion, posted by three
/// callbacks, then reach their consumer in one hand-off, and a turn that finished many requests
/// wakes the delivering threads once, not once per event. Used on the curl thread only.
final class CurlDrainBatch {
    private var mailboxes: [CurlEventMailbox] = []

    /// Starts `mailbox`'s delivery when the turn ends.
    func add(_ mailbox: CurlEventMailbox) {
        mailboxes.append(mailbox)
    }

    /// Starts the deliveries the turn collected, off the curl thread, where each mailbox delivers
    /// to code the curl thread must never wait for — unless what it holds is its ``CurlEventMailbox/directDelivery``.
    func start() {
        guard !mailboxes.isEmpty else { return }
        let started = mailboxes
        mailboxes.removeAll(keepingCapacity: true)
        for mailbox in started where mailbox.directDelivery == .none || !mailbox.drain(onCurlThread: true) {
            Self.deliveries.async { mailbox.drain() }
        }
    }

    /// Where deliveries run. Made once: on Linux each `DispatchQueue.global()` is a new object.
    static let deliveries = DispatchQueue.global()
}
