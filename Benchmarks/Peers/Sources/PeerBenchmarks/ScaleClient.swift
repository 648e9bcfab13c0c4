import Foundation

/// One client in the scale benchmarks: many Server-Sent-Events streams open at once, each read
/// the way the client's documentation shows.
protocol ScaleClient: Sendable {
    /// Opens `url` as an event stream, calls `recorder.didOpen()` once its head arrived, reads
    /// every event to the body's end, noting each one's latency (``Monotonic``) as the event
    /// reaches this consumer, and hands them to `recorder.didEnd`. Reports failures to `recorder`
    /// rather than throwing, so that one lost stream does not hide what the others did.
    func readStream(url: String, recorder: ScaleRecorder) async
    /// Lets go of the client's connections and threads.
    func shutdown() async throws
}

extension ScaleClient {
    /// Opens `streams` streams of `url` at once; returns once every one has ended.
    func run(url: String, streams: Int, recorder: ScaleRecorder) async {
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<streams {
                group.addTask { await readStream(url: url, recorder: recorder) }
            }
        }
    }
}
