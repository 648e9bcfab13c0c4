import Dispatch
import Foundation

/// What leaving the caller's thread for an I/O thread and coming back costs on this machine,
/// with no Errand code and no network: the floor under every request of a client that, like
/// Errand, never blocks its caller, and that a bare `curl_easy_perform` loop does not pay. Each
/// operation wakes a thread asleep in `curl_multi_poll` (``CurlPollThread``), which answers the
/// way Errand's results arrive: on a delivery queue that then calls back on a serial callback
/// queue, as closures are (`handoff.callbacks.*`), or by resuming the awaiting task
/// (`handoff.async.*`); one operation at a time, or 16 in flight.
enum HandOffBenchmarks {
    static let names = [
        "handoff.callbacks.sequential", "handoff.callbacks.16-in-flight", "handoff.async.sequential",
        "handoff.async.16-in-flight",
    ]

    static func run(_ plan: Plan, progress: (String) -> Void) async throws -> [Measurement] {
        guard names.contains(where: plan.includes) else { return [] }
        let thread = try CurlPollThread()
        let (total, warmup) = plan.counts(default: 20_000)
        let deliveries = DispatchQueue.global()
        let callbacks = DispatchQueue(label: "ErrandBenchmarks.handoff.callbacks")
        var results: [Measurement] = []
        for name in names where plan.includes(name) {
            progress(name)
            let inFlight = name.hasSuffix("16-in-flight") ? 16 : 1
            if name.hasPrefix("handoff.callbacks") {
                results.append(
                    try await Load.callbacks(name, total: total, warmup: warmup, inFlight: inFlight) { done in
                        thread.submit { deliveries.async { callbacks.async { done(nil) } } }
                    })
            } else {
                results.append(
                    try await Load.async(name, total: total, warmup: warmup, inFlight: inFlight) {
                        await withCheckedContinuation { continuation in thread.submit { continuation.resume() } }
                    })
            }
        }
        return results
    }
}
