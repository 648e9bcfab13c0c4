import ErrandScenarios
import Foundation

@testable import Errand

/// Any path on the loopback server, echoed back as JSON by `/anything`.
struct PathApi: BaseRequest {
    var url: String
    var arguments: [String: any Sendable]?

    init(_ url: String, arguments: [String: any Sendable]? = nil) {
        self.url = url
        self.arguments = arguments
    }
}

extension Response {
    /// The echoed query arguments of an `/anything` response.
    var echoedArgs: [String: String] { (object["args"] as? [String: String]) ?? [:] }
}

/// Resumes an `async` test once a group's callback ran, with which one ran and how often.
final class GroupCallbacks<Task: Sendable>: Sendable {
    private let state = Locked<(calls: [String], waiter: CheckedContinuation<Void, Never>?)>(([], nil))

    var success: @Sendable (Task) -> Void { { _ in self.record("success") } }
    var failure: @Sendable (Task) -> Void { { _ in self.record("failure") } }

    private func record(_ call: String) {
        let waiter = state.withLock { state in
            state.calls.append(call)
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// The calls so far, once at least one was made.
    func calls() async -> [String] {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state in
                if state.calls.isEmpty { state.waiter = continuation }
                return !state.calls.isEmpty
            }
            if done { continuation.resume() }
        }
        return state.withLock { $0.calls }
    }
}
