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
