import Foundation

/// Runs blocking work — socket reads, checksums of large files, a thousand starts from many
/// threads — on a thread of its own and awaits its result.
///
/// Swift Testing runs tests on the shared concurrency pool, which has one thread per core: two
/// on a small CI machine. A test that blocks one of them stalls every other test for as long,
/// and timing-sensitive ones then fail for reasons of their neighbours.
public func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result(catching: body)) }.start()
    }
}
