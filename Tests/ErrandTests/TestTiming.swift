import Foundation
import Testing

/// Waits until `condition` holds, checking every 5 ms: for state a test can only observe, such
/// as requests a server received. Past `seconds` (default 10, widened under a sanitizer) it throws,
/// failing the test there: a test that went on would act on a premise that does not hold — a
/// long poll fed events before it had subscribed waits for them forever.
///
/// The bound counts the time the test process ran, not the wall clock: a check that comes more
/// than a quarter second after the one before counts a quarter second. On a loaded two-core
/// machine the whole process, or every thread of the concurrency pool, can stand still for
/// seconds; after such a stall this check would otherwise run before the work it waits for.
func eventually(
    within seconds: TimeInterval = 10, sourceLocation: SourceLocation = #_sourceLocation, _ condition: () -> Bool
) async throws {
    let budget = timingBound(.seconds(seconds))
    let longestStep = Duration.milliseconds(250)
    var spent = Duration.zero
    var last = ContinuousClock.now
    while !condition() {
        guard spent < budget else {
            throw ConditionTimedOut(seconds: seconds, sourceLocation: sourceLocation)
        }
        try await Task.sleep(for: .milliseconds(5))
        let now = ContinuousClock.now
        spent += min(now - last, longestStep)
        last = now
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
