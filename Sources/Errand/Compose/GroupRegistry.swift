/// The groups an agent is running, so that ``NetworkAgent/cancelAllRequests()`` ends them.
final class GroupRegistry: Sendable {
    private let groups = Locked<[ObjectIdentifier: any RequestGroupTask]>([:])

    func register(_ group: any RequestGroupTask) {
        groups.withLock { $0[ObjectIdentifier(group)] = group }
    }

    func unregister(_ group: any RequestGroupTask) {
        _ = groups.withLock { $0.removeValue(forKey: ObjectIdentifier(group)) }
    }

    func cancelAll() {
        let running = groups.withLock { Array($0.values) }
        running.forEach { $0.cancel() }
    }
}
