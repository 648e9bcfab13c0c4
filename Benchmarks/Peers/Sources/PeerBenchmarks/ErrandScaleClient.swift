import Errand
import Foundation

/// Errand's Server-Sent Events as its documentation shows them: `agent.stream(_:)` returns once
/// the head arrived, then `stream.events` yields each parsed event. On `CurlTransport` with
/// ``ConnectionOptions/maximumConnectionsPerHost`` raised to the number of streams (the default,
/// 6, would hold all but six back), and `maxConcurrentRequests = 64` as in the loopback rows (an
/// open stream gives its place back once its head arrived; 64 bounds how many open at once).
struct ErrandScaleClient: ScaleClient {
    private let agent: NetworkAgent

    init(streams: Int) {
        var connection = ConnectionOptions()
        connection.maximumConnectionsPerHost = streams
        let config = NetworkConfig()
        config.callbackQueue = DispatchQueue(label: "PeerBenchmarks.scale.callbacks")
        agent = NetworkAgent(config: config, transport: CurlTransport(connection: connection))
        agent.maxConcurrentRequests = 64
    }

    private struct Events: BaseRequest {
        let url: String
        // An idle limit well above the seconds a stream waits for the others to open.
        var timeoutInterval: TimeInterval { 120 }
    }

    func readStream(url: String, recorder: ScaleRecorder) async {
        let stream: ResponseStream
        do {
            stream = try await agent.stream(Events(url: url))
        } catch {
            recorder.didNotOpen(error)
            return
        }
        recorder.didOpen()
        var latencies: [Int64] = []
        do {
            for try await event in stream.events {
                // Read first: what follows is this consumer's own work, not the delivery.
                let arrived = Monotonic.nanoseconds()
                guard let sent = Monotonic.sendingTime(in: event.data) else {
                    throw PeerError("Errand: an event without a timestamp: \(event.data)")
                }
                latencies.append(arrived - sent)
            }
            recorder.didEnd(latencies: latencies, error: nil)
        } catch {
            recorder.didEnd(latencies: latencies, error: error)
        }
    }

    func shutdown() async throws {}
}
