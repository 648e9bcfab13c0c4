/// Runs a batch or chain for an `async` caller.
enum GroupAwaiter {
    /// Starts a group with `start`, waits for it, and returns its requests' responses in step
    /// order. Cancelling the calling Swift task cancels the group.
    static func responses<Group: RequestGroupTask>(
        _ start: (@escaping @Sendable (Group) -> Void) -> Group
    ) async throws(ErrandError) -> [Response] {
        let started = Locked<Group?>(nil)
        let finished: Group = await withTaskCancellationHandler {
            // Unchecked: a group calls back exactly once, whatever happens to it.
            await withUnsafeContinuation { continuation in
                let group = start { continuation.resume(returning: $0) }
                started.withLock { $0 = group }
                if Task.isCancelled { group.cancel() }
            }
        } onCancel: {
            started.withLock { $0 }?.cancel()
        }
        if let error = finished.error { throw error }
        return finished.tasks.compactMap(\.response)
    }
}
