import Foundation
import Testing

@testable import Errand

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The corrections both transports apply to libcurl's view of a failure, including messages
/// only FoundationNetworking reports.
@Suite("TransportErrorCode")
struct TransportErrorCodeTests {
    let http = URL(string: "http://127.0.0.1/x")

    @Test func anUnsupportedProtocolOnAnHTTPURLIsTheServersReply() {
        #expect(TransportErrorCode.corrected(.unsupportedURL, url: http, message: "") == .badServerResponse)
        #expect(
            TransportErrorCode.corrected(.unsupportedURL, url: URL(string: "HTTPS://h/"), message: "")
                == .badServerResponse)
        #expect(
            TransportErrorCode.corrected(.unsupportedURL, url: URL(string: "gopher://h/"), message: "")
                == .unsupportedURL)
        #expect(TransportErrorCode.corrected(.unsupportedURL, url: nil, message: "") == .unsupportedURL)
    }

    @Test func unknownFailuresAreNamedByLibcurlsMessage() {
        let cases: [(String, URLError.Code)] = [
            ("transfer closed with 500 bytes remaining to read", .networkConnectionLost),
            ("transfer closed with outstanding read data remaining", .networkConnectionLost),
            ("Error while processing content unencoding: invalid code lengths set", .cannotDecodeContentData),
            ("something libcurl has not said before", .unknown),
        ]
        for (message, code) in cases {
            #expect(TransportErrorCode.corrected(.unknown, url: http, message: message) == code, "\(message)")
        }
    }

    @Test func otherCodesAreKept() {
        #expect(TransportErrorCode.corrected(.timedOut, url: http, message: "transfer closed with") == .timedOut)
        #expect(
            TransportErrorCode.corrected(.networkConnectionLost, url: http, message: "") == .networkConnectionLost)
    }
}

@Suite("Schemes")
struct SchemeTests {
    @Test(arguments: TransportKind.allCases, ["file:///etc/passwd", "ftp://127.0.0.1/x", "gopher://127.0.0.1/x"])
    func onlyHTTPAndHTTPSAreOpened(_ kind: TransportKind, _ url: String) async throws {
        let probe = TransportProbe()
        _ = probe.send(TransportRequest(url: try #require(URL(string: url))), through: kind.make())
        let outcome = await probe.completion()
        #expect(outcome.statusCode == nil)
        #expect(outcome.error != nil)
        #expect(outcome.json.isEmpty)
    }
}
