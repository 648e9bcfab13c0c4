import Errand
import Foundation

/// Every progress value a transfer reported, in order.
public final class ProgressLog: @unchecked Sendable {  // Sendable because `lock` guards `values`.
    private let lock = NSLock()
    private var storage: [TransferProgress] = []

    public init() {}

    public var values: [TransferProgress] {
        lock.lock()
        defer { lock.unlock() }
        return storage
    }

    public func append(_ progress: TransferProgress) {
        lock.lock()
        storage.append(progress)
        lock.unlock()
    }

    public var isMonotonic: Bool {
        zip(values, values.dropFirst()).allSatisfy { $0.completedBytes <= $1.completedBytes }
    }
}
