import Foundation

/// Waits until `condition` holds, checking every 5 ms, for at most `seconds` (default 10): for
/// state a test can only observe, such as requests a server received. A test then checks the
/// condition itself, so running out of time fails it rather than passing silently.
func eventually(within seconds: TimeInterval = 10, _ condition: () -> Bool) async throws {
    let deadline = Date(timeIntervalSinceNow: seconds)
    while !condition(), Date() < deadline {
        try await Task.sleep(nanoseconds: 5_000_000)
    }
}

/// A time bound a test asserts, widened twentyfold under a sanitizer, which slows everything
/// several-fold: `.ci/run` sets `ERRAND_SANITIZER` for that pass.
func timingBound(_ bound: Duration) -> Duration {
    ProcessInfo.processInfo.environment["ERRAND_SANITIZER"] == nil ? bound : bound * 20
}
