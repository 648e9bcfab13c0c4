import AsyncHTTPClient
import Foundation
import NIOCore

/// AsyncHTTPClient, which has no event-stream parser: `execute` returns once the head arrived,
/// then the body's chunks are streamed and split into events (``EventSplitter``). A client of
/// its own on NIO's shared event loops (one per core, as `HTTPClient.shared`'s), its pool's
/// connections per host raised to the number of streams (default 8), with the same 120-second
/// idle limit as Errand's requests.
struct AHCScaleClient: ScaleClient {
    private let client: HTTPClient

    init(streams: Int) {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: streams)
        configuration.timeout = .init(connect: .seconds(60), read: .seconds(120))
        client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }

    func readStream(url: String, recorder: ScaleRecorder) async {
        let response: HTTPClientResponse
        do {
            // The deadline covers the whole body: an hour, so the idle limit is what ends a stall.
            response = try await client.execute(HTTPClientRequest(url: url), timeout: .hours(1))
            guard response.status == .ok else { throw PeerError("AsyncHTTPClient: answered \(response.status)") }
        } catch {
            recorder.didNotOpen(error)
            return
        }
        recorder.didOpen()
        var latencies: [Int64] = []
        var splitter = EventSplitter()
        do {
            for try await chunk in response.body {
                splitter.append(chunk.readableBytesView)
                while let data = splitter.next() {
                    let arrived = Monotonic.nanoseconds()
                    guard let sent = Monotonic.sendingTime(in: data) else {
                        throw PeerError("AsyncHTTPClient: an event without a timestamp: \(data)")
                    }
                    latencies.append(arrived - sent)
                }
            }
            recorder.didEnd(latencies: latencies, error: nil)
        } catch {
            recorder.didEnd(latencies: latencies, error: error)
        }
    }

    func shutdown() async throws {
        try await client.shutdown()
    }
}
