import Dispatch
import ErrandTestServer
import Foundation
import Testing

@testable import Errand

/// Cancellation from other threads at each stage of a request ends it with exactly one
/// `.completed(.cancelled)`, promptly.
@Suite("CurlTransport: cancellation", .enabled(if: CurlTransport.isAvailable))
struct CurlCancellationTests {
    /// Where a request is when it is cancelled, and how the test gets it there.
    enum Stage: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// Cancelled from another thread the moment it is sent: while it is queued or connecting.
        case connect
        /// Its body was handed over, the response has not begun.
        case headers
        /// Its first body chunk arrived.
        case body

        var testDescription: String { rawValue }
    }

    @Test(arguments: Stage.allCases)
    func aCancelFromAnotherThreadEndsTheRequestOnce(_ stage: Stage) async throws {
        let transport = CurlTransport()
        // The stage's event may arrive before `send` has returned the task: the cancel then
        // waits for it, rather than finding nothing to cancel.
        let task = Locked<(handle: (any TransportTask)?, isCancelWanted: Bool)>((nil, false))
        let cancelElsewhere: @Sendable () -> Void = {
            DispatchQueue.global().async {
                task.withLock { task in
                    task.isCancelWanted = true
                    return task.handle
                }?.cancel()
            }
        }
        let probe = TransportProbe { event in
            switch (stage, event) {
            case (.headers, .uploadProgress), (.body, .body): cancelElsewhere()
            default: break
            }
        }
        let request: TransportRequest
        switch stage {
        case .connect: request = try .loopback("/delay/5")
        case .headers: request = try .loopback("/delay/5", method: "POST", body: Data("x".utf8))
        case .body: request = try .loopback("/download/100000000?rate=1000000")
        }
        let handle = probe.send(request, through: transport)
        if task.withLock({ task in
            task.handle = handle
            return task.isCancelWanted
        }) {
            handle.cancel()
        }
        if stage == .connect { cancelElsewhere() }
        let outcome = await probe.completion()
        #expect(outcome.error == .cancelled)
        #expect(outcome.completionCount == 1)
        // Ended before the server answered (5 s) or finished (100 s at 1 MB/s), not by it.
        switch stage {
        case .connect: #expect(outcome.headCount == 0)
        case .headers: #expect(outcome.headCount == 0 && !outcome.uploadProgress.isEmpty)
        case .body: #expect(!outcome.body.isEmpty && outcome.body.count < 100_000_000)
        }
        // Nothing arrives after the completion, even while the curl thread lets go of the transfer.
        let afterwards = TransportProbe()
        _ = afterwards.send(try .loopback("/get"), through: transport)
        #expect(await afterwards.completion().statusCode == 200)
        #expect(!probe.outcome.outOfOrder && probe.outcome.completionCount == 1)
    }

    @Test func aThousandStartAndCancelPairsEndInAThousandCallbacks() async throws {
        let transport = CurlTransport()
        let request = try TransportRequest.loopback("/delay/2")
        let count = 1000
        let completions = Locked([Int](repeating: 0, count: count))
        let errors = Locked([ErrandError?](repeating: nil, count: count))
        let allDone = AsyncStream<Void>.makeStream()
        DispatchQueue.concurrentPerform(iterations: count) { index in
            let task = transport.send(request) { event in
                guard case .completed(let error) = event else { return }
                errors.withLock { $0[index] = error }
                let finished = completions.withLock { counts -> Bool in
                    counts[index] += 1
                    return counts.reduce(0, +) == count
                }
                if finished { allDone.continuation.yield() }
            }
            task.cancel()
        }
        for await _ in allDone.stream { break }
        #expect(completions[\.self].allSatisfy { $0 == 1 })
        #expect(errors[\.self].allSatisfy { $0 == .cancelled })
        // The transport is still sound.
        let probe = TransportProbe()
        _ = probe.send(try .loopback("/get"), through: transport)
        #expect(await probe.completion().statusCode == 200)
    }
}
