import Dispatch
import ErrandTestServer
import Foundation
import Testing

@testable import Errand

/// A consumer that falls behind pauses the transfer instead of making the transport hold the body.
@Suite("CurlTransport: flow control", .enabled(if: CurlTransport.isAvailable))
struct CurlFlowControlTests {
    @Test func aStalledConsumerKeepsA256MiBDownloadBoundedAndComplete() async throws {
        // Unpaused, loopback would pile up tens of MiB during each stall, against a 512 KiB limit; the
        // 1 GiB case is measured in release by ErrandBenchmarks.
        let size = 256 << 20
        let limit = 512 * 1024
        let transport = CurlTransport(bufferLimit: limit)
        let received = Locked(0)
        let completion = AsyncStream<ErrandError?>.makeStream()
        _ = transport.send(try .loopback("/download/\(size)")) { event in
            switch event {
            case .body(let chunk):
                let before = received.withLock { total in
                    defer { total += chunk.count }
                    return total
                }
                // Every 64 MiB the consumer stalls, far longer than loopback needs to fill any buffer.
                if before >> 26 != (before + chunk.count) >> 26 { Thread.sleep(forTimeInterval: 0.2) }
            case .completed(let error):
                completion.continuation.yield(error)
            default:
                break
            }
        }
        var error: ErrandError?
        for await result in completion.stream {
            error = result
            break
        }
        #expect(error == nil)
        #expect(received[\.self] == size)
        // Never more than the limit and one chunk waited for the consumer…
        #expect(transport.peakBufferedBytes <= limit + CurlTransfer.receiveBufferSize)
        // …and the stalls did fill it, so the pause is what held the rest back.
        #expect(transport.peakBufferedBytes >= limit / 2)
    }
}
