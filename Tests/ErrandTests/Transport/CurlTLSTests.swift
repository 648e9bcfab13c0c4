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
    private func trusting(_ server: TLSTestServer, pinning pins: [String: [String]] = [:]) throws -> CurlTransport {
        var connection = ConnectionOptions()
        connection.trustedRoots = .only([URL(fileURLWithPath: server.certificateFile)])
        return CurlTransport(connection: connection, serverTrust: try ServerTrust(pinnedPublicKeys: pins))
    }

    /// A pin no key matches: the hash of nothing.
    private let unrelatedPin = "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="

    private func send(_ url: String, through transport: CurlTransport) async throws -> TransportProbe.Outcome {
        let probe = TransportProbe()
        _ = probe.send(TransportRequest(url: try #require(URL(string: url))), through: transport)
        return await probe.completion()
    }

    @Test func aCertificateTheSystemDoesNotTrustIsRefused() async throws {
        let server = try await TLSTestServer.start()
        let outcome = try await send(server.baseURL + "/hello", through: CurlTransport())
        #expect(outcome.urlErrorCode == .serverCertificateUntrusted)
        #expect(outcome.headCount == 0)
    }

    @Test func urlSessionTransportNamesAnUntrustedCertificateAsCurlTransportDoes() async throws {
        let server = try await TLSTestServer.start()
        let probe = TransportProbe()
        _ = probe.send(
            TransportRequest(url: try #require(URL(string: server.baseURL + "/hello"))), through: URLSessionTransport())
        let outcome = await probe.completion()
        #expect(outcome.urlErrorCode == .serverCertificateUntrusted, "\(String(describing: outcome.error))")
        #expect(outcome.headCount == 0)
    }

    @Test func aTrustedCertificateConnectsAndTheHandshakeIsTimed() async throws {
        let server = try await TLSTestServer.start()
        let outcome = try await send(server.baseURL + "/hello", through: try trusting(server))
        #expect(outcome.statusCode == 200)
        #expect(outcome.json["path"] as? String == "/hello")
        let metrics = try #require(outcome.metrics)
        #expect(metrics.secureConnection > 0 && metrics.secureConnection <= metrics.total)
        #expect(metrics.httpVersion == "HTTP/1.1")
    }

    @Test func aRedirectFromHTTPSToHTTPIsRefusedAndNeverSent() async throws {
        let server = try await TLSTestServer.start()
        let plain = try #require(loopbackServer, "the loopback server did not start")
        let marker = "/anything/downgrade-\(UUID().uuidString)"
        let target = (plain.baseURL + marker).addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let outcome = try await send(server.baseURL + "/to?url=" + target, through: try trusting(server))
        guard case .redirectRefused(let reason) = outcome.error else {
            Issue.record("expected a refused redirect, got \(String(describing: outcome.error))")
            return
        }
        #expect(reason.contains("HTTPS to HTTP"))
        #expect(outcome.headCount == 0)
        #expect(plain.receivedRequests(path: marker).isEmpty)
    }

    @Test func aRedirectWithinHTTPSIsFollowed() async throws {
        let server = try await TLSTestServer.start()
        let target = (server.baseURL + "/landed").addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let outcome = try await send(server.baseURL + "/to?url=" + target, through: try trusting(server))
        #expect(outcome.json["path"] as? String == "/landed")
        #expect(outcome.metrics?.redirectCount == 1)
    }

    @Test func aPinnedHostPresentingItsPinnedKeyConnects() async throws {
        let server = try await TLSTestServer.start()
        let transport = try trusting(server, pinning: ["127.0.0.1": [unrelatedPin, "sha256//" + server.publicKeyPin]])
        let outcome = try await send(server.baseURL + "/hello", through: transport)
        #expect(outcome.statusCode == 200)
    }

    @Test func aPinnedHostPresentingAnotherKeyIsRefusedBeforeAnythingIsSent() async throws {
        let server = try await TLSTestServer.start()
        let transport = try trusting(server, pinning: ["127.0.0.1": [unrelatedPin]])
        let outcome = try await send(server.baseURL + "/hello", through: transport)
        #expect(outcome.urlErrorCode == .serverCertificateUntrusted)
        #expect(outcome.headCount == 0)
    }

    @Test func aRedirectToAPinnedHostIsCheckedAgainstItsPins() async throws {
        let server = try await TLSTestServer.start()
        let plain = try TestServer(host: "127.0.0.2")
        let target = (server.baseURL + "/hello").addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let transport = try trusting(server, pinning: ["127.0.0.1": [unrelatedPin]])
        let outcome = try await send(plain.baseURL + "/redirect-to?url=" + target, through: transport)
        #expect(outcome.urlErrorCode == .serverCertificateUntrusted)
        #expect(outcome.headCount == 0)
    }

    @Test func pinsForAnotherHostLeaveThisOneToTheSystemsValidation() async throws {
        let server = try await TLSTestServer.start()
        let transport = try trusting(server, pinning: ["api.example.com": [unrelatedPin]])
        let outcome = try await send(server.baseURL + "/hello", through: transport)
        #expect(outcome.statusCode == 200)
    }

    @Test func plainHTTPToAPinnedHostIsRefusedUnsent() async throws {
        let plain = try #require(loopbackServer, "the loopback server did not start")
        let marker = "/anything/pinned-\(UUID().uuidString)"
        for transport in [
            try CurlTransport(serverTrust: ServerTrust(pinnedPublicKeys: ["127.0.0.1": [unrelatedPin]]))
                as any Transport,
            try URLSessionTransport(serverTrust: ServerTrust(pinnedPublicKeys: ["127.0.0.1": [unrelatedPin]])),
        ] {
            let probe = TransportProbe()
            _ = probe.send(TransportRequest(url: try #require(URL(string: plain.baseURL + marker))), through: transport)
            let outcome = await probe.completion()
            #expect(outcome.urlErrorCode == .secureConnectionFailed, "\(type(of: transport))")
        }
        #expect(plain.receivedRequests(path: marker).isEmpty)
    }

    @Test func urlSessionTransportRefusesAPinnedHostItCannotCheck() async throws {
        let server = try await TLSTestServer.start()
        let transport = URLSessionTransport(
            serverTrust: try ServerTrust(pinnedPublicKeys: ["127.0.0.1": [server.publicKeyPin]]))
        let probe = TransportProbe()
        _ = probe.send(TransportRequest(url: try #require(URL(string: server.baseURL + "/hello"))), through: transport)
        let outcome = await probe.completion()
        #expect(outcome.urlErrorCode == .secureConnectionFailed)
        #expect(outcome.headCount == 0)
    }

    @Test func aMalformedPinIsRejectedWhenTheTrustIsMade() {
        #expect(throws: ErrandError.self) { try ServerTrust(pinnedPublicKeys: ["api.example.com": ["not-a-hash"]]) }
        #expect(throws: ErrandError.self) { try ServerTrust(pinnedPublicKeys: ["api.example.com": []]) }
        #expect(throws: ErrandError.self) {
            try ServerTrust(pinnedPublicKeys: ["api.example.com": [Data(count: 20).base64EncodedString()]])
        }
    }
}
