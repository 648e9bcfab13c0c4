import Foundation
import Testing

@testable import Errand

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A consumer that only records events may take them on the curl thread, saving a hand-off per
/// request; everything else, and work such as storing cookies, stays off that thread.
@Suite("CurlTransport: direct delivery", .enabled(if: CurlTransport.isAvailable))
struct CurlDirectDeliveryTests {
    /// What one request reported: whether each event arrived on the curl thread, and its completion.
    struct Delivery: Sendable {
        var onCurlThread: [Bool] = []
        var statusCode: Int?
        var error: ErrandError?
    }

    private func deliver(
        _ path: String, deliversDirectly: Bool, through transport: CurlTransport = CurlTransport(),
        cookieJar: CookieJar? = nil, atCompletion: @escaping @Sendable () -> Void = {}
    ) async throws -> Delivery {
        var request = try TransportRequest.loopback(path)
        request.cookieJar = cookieJar
        let delivery = Locked(Delivery())
        return await withCheckedContinuation { continuation in
            _ = transport.send(request, deliversDirectly: deliversDirectly) { event in
                delivery.withLock { $0.onCurlThread.append(CurlDriver.isCurrentThread) }
                switch event {
                case .responseHead(let statusCode, _): delivery.withLock { $0.statusCode = statusCode }
                case .completed(let error):
                    atCompletion()
                    continuation.resume(
                        returning: delivery.withLock {
                            $0.error = error; return $0
                        })
                default: break
                }
            }
        }
    }

    @Test func aSmallResponseReachesADirectConsumerOnTheCurlThread() async throws {
        let delivery = try await deliver("/small-json", deliversDirectly: true)
        #expect(delivery.statusCode == 200 && delivery.error == nil)
        #expect(delivery.onCurlThread.count >= 3, "head, body and completion at least")
        #expect(!delivery.onCurlThread.contains(false), "\(delivery.onCurlThread)")
    }

    @Test func anyOtherConsumerNeverRunsOnTheCurlThread() async throws {
        let delivery = try await deliver("/small-json", deliversDirectly: false)
        #expect(delivery.statusCode == 200 && delivery.error == nil)
        #expect(!delivery.onCurlThread.isEmpty && !delivery.onCurlThread.contains(true))
    }

    @Test func cookiesAreStoredOffTheCurlThreadBeforeTheEventsThatFollow() async throws {
        let jar = CookieJar()
        let storedAtCompletion = Locked(false)
        let delivery = try await deliver(
            "/response-headers?Set-Cookie=oat%3Dmeal", deliversDirectly: true, cookieJar: jar
        ) {
            storedAtCompletion.withLock { $0 = jar.allCookies.contains { $0.name == "oat" } }
        }
        #expect(delivery.statusCode == 200 && delivery.error == nil)
        #expect(storedAtCompletion.withLock { $0 })
        #expect(!delivery.onCurlThread.isEmpty && !delivery.onCurlThread.contains(true), "\(delivery.onCurlThread)")
    }
}
