import Dispatch

/// When the curl loop must next look at each request's timeouts: a min-heap of checks, so that
/// a turn touches only the requests whose check is due, however many are open.
///
/// A check is a time at or before the request's real expiry. Activity only moves an idle
/// timeout later, so the loop does not reschedule on every byte: when a check comes due it asks
/// the request for its expiry now, and expires it or schedules the next check.
struct CurlDeadlines {
    private struct Check {
        let time: UInt64
        let id: Int
    }

    private var heap: [Check] = []
    /// Each request's one live check; an entry of the heap that differs is stale and skipped.
    private var scheduled: [Int: UInt64] = [:]

    /// The checks held, stale ones included: a bounded multiple of the live ones.
    var storedChecks: Int { heap.count }

    /// Makes sure request `id` is looked at by `expiry`; `nil` changes nothing.
    mutating func schedule(_ id: Int, at expiry: DispatchTime?) {
        guard let time = expiry?.uptimeNanoseconds else { return }
        if let current = scheduled[id], current <= time { return }
        scheduled[id] = time
        push(Check(time: time, id: id))
        compactIfMostlyStale()
    }

    /// Forgets request `id`: it ended.
    mutating func cancel(_ id: Int) {
        scheduled[id] = nil
    }

    /// The requests whose check is due at `now`, each forgotten until scheduled again.
    mutating func takeDue(at now: DispatchTime) -> [Int] {
        var due: [Int] = []
        while let first = heap.first, first.time <= now.uptimeNanoseconds {
            popFirst()
            guard scheduled[first.id] == first.time else { continue }
            scheduled[first.id] = nil
            due.append(first.id)
        }
        return due
    }

    /// Milliseconds from `now` until the next check, rounded up, at most `limit`.
    mutating func milliseconds(from now: DispatchTime, atMost limit: Int) -> Int {
        while let first = heap.first, scheduled[first.id] != first.time { popFirst() }
        guard let next = heap.first?.time else { return limit }
        let current = now.uptimeNanoseconds
        guard next > current else { return 0 }
        return min(limit, Int((next - current + 999_999) / 1_000_000))
    }

    /// Rebuilds the heap from the live checks once stale ones outnumber them: requests that end
    /// long before their timeout (most of them) leave their check behind.
    private mutating func compactIfMostlyStale() {
        guard heap.count > 2 * scheduled.count + 64 else { return }
        // A sorted array is a valid min-heap.
        heap = scheduled.map { Check(time: $0.value, id: $0.key) }.sorted { $0.time < $1.time }
    }

    private mutating func push(_ check: Check) {
        heap.append(check)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].time < heap[parent].time else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func popFirst() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count, heap[left].time < heap[smallest].time { smallest = left }
            if right < heap.count, heap[right].time < heap[smallest].time { smallest = right }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
