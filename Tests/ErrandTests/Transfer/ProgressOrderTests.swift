import ErrandScenarios
import Foundation
import Testing

@testable import Errand

/// Progress never goes backwards for a reader that starts while values arrive: a stream's first
/// value and every later one are handed over in the order they were kept. Transfer progress and
/// a batch's progress share the streams' type, `NewestValueStreams`.
@Suite("Progress: never backwards")
struct ProgressOrderTests {
    /// Runs `first` and `second` at once on two threads of their own, `rounds` times.
    private func race(
        rounds: Int, _ first: @escaping @Sendable (Int) -> Void, _ second: @escaping @Sendable (Int) -> Void
    )
        async throws
    {
        try await onOwnThread {
            for round in 0..<rounds {
                DispatchQueue.concurrentPerform(iterations: 2) { $0 == 0 ? first(round) : second(round) }
            }
        }
    }

    @Test func aStreamAskedForWhileAValueIsReportedEndsWithTheNewest() async throws {
        let rounds = 30_000
        let reporters = (0..<rounds).map { _ in
            ProgressReporter(sinks: [], latest: TransferProgress(completedBytes: 1, totalBytes: 2))
        }
        let streams = Locked([AsyncStream<TransferProgress>?](repeating: nil, count: rounds))
        try await race(
            rounds: rounds, { round in streams.withLock { $0[round] = reporters[round].stream() } },
            { round in reporters[round].report(TransferProgress(completedBytes: 2, totalBytes: 2)) })
        var backwards = 0
        for (round, stream) in streams.withLock({ $0 }).enumerated() {
            reporters[round].finish()
            var last: TransferProgress?
            for await value in stream ?? AsyncStream(unfolding: { nil }) { last = value }
            if last?.completedBytes != 2 { backwards += 1 }
        }
        #expect(backwards == 0, "\(backwards) of \(rounds) streams ended on an older value")
    }

    @Test func valuesReportedAtOnceReachAStreamInTheOrderTheyWereKept() async throws {
        let rounds = 30_000
        let reporters = (0..<rounds).map { _ in ProgressReporter(sinks: []) }
        let streams = reporters.map { $0.stream() }
        try await race(
            rounds: rounds, { reporters[$0].report(TransferProgress(completedBytes: 1, totalBytes: 2)) },
            { reporters[$0].report(TransferProgress(completedBytes: 2, totalBytes: 2)) })
        var disagreeing = 0
        for (reporter, stream) in zip(reporters, streams) {
            reporter.finish()
            var last: TransferProgress?
            for await value in stream { last = value }
            var kept: TransferProgress?
            for await value in reporter.stream() { kept = value }
            if last != kept { disagreeing += 1 }
        }
        #expect(disagreeing == 0, "\(disagreeing) of \(rounds) streams ended on another value than the newest")
    }

    /// A closure is called with each value at most once, newest first, however reports and
    /// its calls interleave.
    @Test func aClosureNeverGetsTheSameValueTwice() async throws {
        let queue = DispatchQueue(label: "errand.tests.progress")
        let log = ProgressLog()
        let reporter = ProgressReporter(sinks: [.init(closure: { log.append($0) }, queue: queue)])
        try await onOwnThread {
            for sent in 1...200_000 {
                reporter.report(TransferProgress(completedBytes: Int64(sent), totalBytes: 200_000))
            }
        }
        await withCheckedContinuation { done in queue.async { done.resume() } }
        let values = log.values.map(\.completedBytes)
        #expect(zip(values, values.dropFirst()).allSatisfy { $0 < $1 }, "a value came twice or went back")
        #expect(values.last == 200_000)
    }
}
