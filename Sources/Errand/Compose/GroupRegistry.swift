/// The batches and chains an agent is running, so that ``NetworkAgent/cancelAllRequests()``
/// also stops a chain between two steps, when none of its requests is running.
final class GroupRegistry: Sendable {
    private let groups = Locked<[ObjectIdentifier: any RequestGroupTask]>([:])

    func register(_ group: any RequestGroupTask) {
        groups.withLock { $0[ObjectIdentifier(group)] = group }
    }

    func unregister(_ group: any RequestGroupTask) {
        groups.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(group)) }
    }

    /// Cancels every group running now.
    func cancelAll() {
        groups.withLock { Array($0.values) }.forEach { $0.cancel() }
    }
}
