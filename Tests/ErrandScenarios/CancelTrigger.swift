import Errand
import Foundation

/// Cancels a task from its progress closure once enough bytes arrived: the closure runs on the
/// callback queue, so the cancel lands mid-transfer however busy the test process is.
public final class CancelTrigger: @unchecked Sendable {  // Sendable because `lock` guards `storedTask`.
    private let lock = NSLock()
    private var storedTask: RequestTask?
    private let threshold: Int64

    public init(atBytes threshold: Int64) {
        self.threshold = threshold
    }

    public var task: RequestTask? {
        get {
            lock.lock()
            defer { lock.unlock() }
            return storedTask
        }
        set {
            lock.lock()
            storedTask = newValue
            lock.unlock()
        }
    }

    public func observe(_ progress: TransferProgress) {
        if progress.completedBytes >= threshold { task?.cancel() }
    }
}
