import Foundation

/// A value guarded by its own lock: the one place Errand shares mutable state across threads.
final class Locked<Value>: @unchecked Sendable {  // Sendable because every access goes through `lock`.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    /// One field of the value, read or written under the lock.
    subscript<Field>(_ field: WritableKeyPath<Value, Field>) -> Field {
        get { withLock { $0[keyPath: field] } }
        set { withLock { $0[keyPath: field] = newValue } }
    }
}
