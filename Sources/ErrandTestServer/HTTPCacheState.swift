import Foundation

/// The resources of `/http-cache/{name}` and how each was answered.
final class HTTPCacheState: @unchecked Sendable {  // every `var` is read and written only while holding `lock`
    /// How many answers of each kind a resource has had.
    struct Answers: Sendable, Equatable {
        var full = 0
        var notModified = 0
    }

    private let lock = NSLock()
    private var resources: [String: CacheableResource] = [:]
    private var answers: [String: Answers] = [:]

    func set(_ resource: CacheableResource, for name: String) {
        lock.withLock { resources[name] = resource }
    }

    func resource(_ name: String) -> CacheableResource? {
        lock.withLock { resources[name] }
    }

    func count(_ name: String, notModified: Bool) {
        lock.withLock {
            if notModified {
                answers[name, default: Answers()].notModified += 1
            } else {
                answers[name, default: Answers()].full += 1
            }
        }
    }

    func answers(_ name: String) -> Answers {
        lock.withLock { answers[name] ?? Answers() }
    }
}
