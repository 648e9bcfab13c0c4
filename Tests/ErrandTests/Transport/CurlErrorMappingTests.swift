import CErrandCurl
import Foundation
import Testing

@testable import Errand

/// libcurl's result codes become the errors URLSessionTransport reports for the same failures,
/// including those loopback cannot produce (DNS, TLS handshake).
@Suite("CurlErrorMapping")
struct CurlErrorMappingTests {
    private let url = URL(fileURLWithPath: "/")

    @Test func eachFailureMapsToURLSessionsCode() {
        let expected: [(Int32, URLError.Code)] = [
            (ERRAND_CURLE_COULDNT_RESOLVE_HOST, .cannotFindHost), (ERRAND_CURLE_COULDNT_CONNECT, .cannotConnectToHost),
            (ERRAND_CURLE_GOT_NOTHING, .badServerResponse), (ERRAND_CURLE_RECV_ERROR, .networkConnectionLost),
            (ERRAND_CURLE_PARTIAL_FILE, .networkConnectionLost), (ERRAND_CURLE_SEND_ERROR, .networkConnectionLost),
            (ERRAND_CURLE_SSL_CONNECT_ERROR, .secureConnectionFailed),
            (ERRAND_CURLE_PEER_FAILED_VERIFICATION, .serverCertificateUntrusted),
            (ERRAND_CURLE_TOO_MANY_REDIRECTS, .httpTooManyRedirects), (ERRAND_CURLE_URL_MALFORMAT, .badURL),
            (ERRAND_CURLE_BAD_CONTENT_ENCODING, .cannotDecodeContentData),
        ]
        for (code, urlErrorCode) in expected {
            guard case .transport(let error) = CurlErrorMapping.error(for: code, url: url) else {
                Issue.record("code \(code) is not a transport error")
                continue
            }
            #expect(error.code == urlErrorCode, "code \(code)")
            #expect(error.failingURL == url)
        }
    }

    @Test func successTimeoutAndAbortAreTheirOwnCases() {
        #expect(CurlErrorMapping.error(for: ERRAND_CURLE_OK, url: url) == nil)
        #expect(CurlErrorMapping.error(for: ERRAND_CURLE_OPERATION_TIMEDOUT, url: url) == .timedOut)
        #expect(CurlErrorMapping.error(for: ERRAND_CURLE_ABORTED_BY_CALLBACK, url: url) == .cancelled)
    }
}

/// A libcurl call that fails ends its request at once, with an error naming what failed, instead
/// of leaving it to a timeout — or, for a transfer paused for its consumer, to wait forever.
@Suite("CurlTransport: failing libcurl calls", .enabled(if: CurlTransport.isAvailable))
struct CurlCallFailureTests {
    /// libcurl's CURLM_OUT_OF_MEMORY and CURLE_BAD_FUNCTION_ARGUMENT.
    static let outOfMemory: Int32 = 3
    static let badArgument: Int32 = 43

    private func transport(bufferLimit: Int = 1 << 20, calls: CurlCalls) -> CurlTransport {
        CurlTransport(configuration: .default, bufferLimit: bufferLimit, calls: calls)
    }

    @Test func aTransferLibcurlWillNotStartFailsAtOnce() async throws {
        var calls = CurlCalls.libcurl
        calls.addHandle = { _, _ in Self.outOfMemory }
        var request = try TransportRequest.loopback("/get")
        request.timeoutInterval = 10
        let probe = TransportProbe()
        _ = probe.send(request, through: transport(calls: calls))
        let outcome = await probe.completion()
        guard case .transport(let error) = outcome.error else {
            Issue.record("expected a transport error, got \(String(describing: outcome.error))")
            return
        }
        #expect(error.localizedDescription.contains("libcurl could not start the transfer"), "\(error)")
        #expect(outcome.completionCount == 1 && outcome.headCount == 0)
    }

    @Test func aPausedTransferLibcurlCannotContinueFailsAtOnce() async throws {
        var calls = CurlCalls.libcurl
        calls.pause = { _, _ in Self.badArgument }
        // A 1-byte buffer: the transfer pauses after its first chunk, and resumes once it is consumed.
        var request = try TransportRequest.loopback("/download/\(4 << 20)")
        request.timeoutIntervalForResource = 10
        let probe = TransportProbe()
        _ = probe.send(request, through: transport(bufferLimit: 1, calls: calls))
        let outcome = await probe.completion()
        guard case .transport(let error) = outcome.error else {
            Issue.record("expected a transport error, got \(String(describing: outcome.error))")
            return
        }
        #expect(error.localizedDescription == CurlLibrary.describe(Self.badArgument), "\(error)")
        #expect(outcome.body.count < 4 << 20)
    }
}
