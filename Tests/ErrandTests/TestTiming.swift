import Foundation
import Testing

/// Waits until `condition` holds, checking every 5 ms: for state a test can only observe, such
/// as requests a server received. Past `seconds` (default 10, widened under a sanitizer) it throws,
/// failing the test there: a test that went on would act on a premise that does not hold — a
/// long poll fed events before it had subscribed waits for them forever.
func eventually(
    within seconds: TimeInterval = 10, sourceLocation: SourceLocation = #_sourceLocation, _ condition: () -> Bool
) async throws {
    let deadline = ContinuousClock.now + timingBound(.seconds(seconds))
    while !condition() {
        guard ContinuousClock.now < deadline else {
            throw ConditionTimedOut(seconds: seconds, sourceLocation: sourceLocation)
        }
        try await Task.sleep(for: .milliseconds(5))
    }
}

/// What ``eventually(within:sourceLocation:_:)`` throws when its condition never held.
struct ConditionTimedOut: Error, CustomStringConvertible {
    let seconds: TimeInterval
    let sourceLocation: SourceLocation

    var description: String { "the condition at \(sourceLocation) did not hold within \(seconds) s" }
}

/// A time bound a test asserts, widened twentyfold under a sanitizer, which slows everything
/// several-fold: `.ci/run` sets `ERRAND_SANITIZER` for that pass.
func timingBound(_ bound: Duration) -> Duration {
    ProcessInfo.processInfo.environment["ERRAND_SANITIZER"] == nil ? bound : bound * 20
}
