import ErrandTestServer
import Foundation
import Testing

@testable import Errand

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// TLS through CurlTransport against a local HTTPS server with a certificate made for the test.
@Suite("CurlTransport: TLS", .enabled(if: CurlTransport.isAvailable && TLSTestServer.canRun))
struct CurlTLSTests {
    private func trusting(_ server: TLSTestServer) -> CurlTransport {
        CurlTransport(configuration: .default, bufferLimit: 1 << 20, certificateAuthorityFile: server.certificateFile)
    }

    private func send(_ url: String, through transport: CurlTransport) async throws -> TransportProbe.Outcome {
        let probe = TransportProbe()
        _ = probe.send(TransportRequest(url: try #require(URL(string: url))), through: transport)
        return await probe.completion()
    }

    @Test func aCertificateTheSystemDoesNotTrustIsRefused() async throws {
        let server = try TLSTestServer()
        let outcome = try await send(server.baseURL + "/hello", through: CurlTransport())
        #expect(outcome.urlErrorCode == .serverCertificateUntrusted)
        #expect(outcome.headCount == 0)
    }

    @Test func aTrustedCertificateConnectsAndTheHandshakeIsTimed() async throws {
        let server = try TLSTestServer()
        let outcome = try await send(server.baseURL + "/hello", through: trusting(server))
        #expect(outcome.statusCode == 200)
        #expect(outcome.json["path"] as? String == "/hello")
        let metrics = try #require(outcome.metrics)
        #expect(metrics.secureConnection > 0 && metrics.secureConnection <= metrics.total)
        #expect(metrics.httpVersion == "HTTP/1.1")
    }

    @Test func aRedirectFromHTTPSToHTTPIsRefusedAndNeverSent() async throws {
        let server = try TLSTestServer()
        let plain = try #require(loopbackServer, "the loopback server did not start")
        let marker = "/anything/downgrade-\(UUID().uuidString)"
        let target = (plain.baseURL + marker).addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let outcome = try await send(server.baseURL + "/to?url=" + target, through: trusting(server))
        guard case .redirectRefused(let reason) = outcome.error else {
            Issue.record("expected a refused redirect, got \(String(describing: outcome.error))")
            return
        }
        #expect(reason.contains("HTTPS to HTTP"))
        #expect(outcome.headCount == 0)
        #expect(plain.receivedRequests(path: marker).isEmpty)
    }

    @Test func aRedirectWithinHTTPSIsFollowed() async throws {
        let server = try TLSTestServer()
        let target = (server.baseURL + "/landed").addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let outcome = try await send(server.baseURL + "/to?url=" + target, through: trusting(server))
        #expect(outcome.json["path"] as? String == "/landed")
        #expect(outcome.metrics?.redirectCount == 1)
    }
}
