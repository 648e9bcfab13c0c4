#if canImport(Darwin)
    import os
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A value guarded by its own lock: the one place Errand shares mutable state across threads.
///
/// A copy shares the value and the lock, as a reference would. Both live in one allocation with
/// the lock inline, where `NSLock` took three (on Linux: the wrapper, the lock object and its
/// mutex) and an Objective-C-style call per use; a request makes several of these.
struct Locked<Value>: @unchecked Sendable {  // Sendable because every access goes through the lock.
    #if canImport(Darwin)
        private typealias Primitive = os_unfair_lock
    #else
        private typealias Primitive = pthread_mutex_t
    #endif

    /// The value as the header, the lock as the one element: elements never move.
    private final class Storage: ManagedBuffer<Value, Primitive> {
        deinit {
            #if !canImport(Darwin)
                _ = withUnsafeMutablePointerToElements { pthread_mutex_destroy($0) }
            #endif
        }
    }

    private let storage: Storage

    init(_ value: Value) {
        let buffer = Storage.create(minimumCapacity: 1) { _ in value }
        buffer.withUnsafeMutablePointerToElements { lock in
            #if canImport(Darwin)
                lock.initialize(to: os_unfair_lock())
            #else
                lock.initialize(to: pthread_mutex_t())
                _ = pthread_mutex_init(lock, nil)
            #endif
        }
        storage = unsafeDowncast(buffer, to: Storage.self)
    }

    /// Runs `body` with exclusive access to the value.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try storage.withUnsafeMutablePointers { value, lock in
            #if canImport(Darwin)
                os_unfair_lock_lock(lock)
                defer { os_unfair_lock_unlock(lock) }
            #else
                _ = pthread_mutex_lock(lock)
                defer { _ = pthread_mutex_unlock(lock) }
            #endif
            return try body(&value.pointee)
        }
    }

    /// One field of the value, read or written under the lock.
    subscript<Field>(_ field: WritableKeyPath<Value, Field>) -> Field {
        get { withLock { $0[keyPath: field] } }
        nonmutating set { withLock { $0[keyPath: field] = newValue } }
    }
}
