import CErrandCurl
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Turns libcurl's result codes into the ``ErrandError`` that URLSessionTransport reports for the same failure.
enum CurlErrorMapping {
    /// The error for a transfer of `url` that ended with `code`; `nil` for success. Its message is
    /// `detail`, libcurl's account of this failure, where there is one, else the code's description.
    static func error(for code: Int32, url: URL, detail: String? = nil) -> ErrandError? {
        guard code != ERRAND_CURLE_OK else { return nil }
        switch code {
        case ERRAND_CURLE_OPERATION_TIMEDOUT: return .timedOut
        case ERRAND_CURLE_ABORTED_BY_CALLBACK: return .cancelled
        default:
            var message = detail ?? CurlLibrary.describe(code)
            let corrected = TransportErrorCode.corrected(urlErrorCode(for: code), url: url, message: message)
            // libcurl's "Unsupported protocol" would blame the URL for what the server sent.
            if code == ERRAND_CURLE_UNSUPPORTED_PROTOCOL && corrected == .badServerResponse {
                message = "The server's reply is not HTTP"
            }
            let userInfo: [String: Any] = [NSURLErrorFailingURLErrorKey: url, NSLocalizedDescriptionKey: message]
            return .transport(URLError(corrected, userInfo: userInfo))
        }
    }

    /// Throws unless `result`, of setting the option that lets a transfer of `url` do `what`, is
    /// `CURLE_OK`: a request is never sent with less checking, or elsewhere, than it asked for.
    static func require(
        _ result: Int32, _ what: String, url: URL, code: URLError.Code = .secureConnectionFailed
    ) throws(ErrandError) {
        guard result != ERRAND_CURLE_OK else { return }
        let reason = "this libcurl cannot \(what): \(CurlLibrary.describe(result))"
        throw .transport(
            URLError(code, userInfo: [NSURLErrorFailingURLErrorKey: url, NSLocalizedDescriptionKey: reason]))
    }

    private static func urlErrorCode(for code: Int32) -> URLError.Code {
        switch code {
        case ERRAND_CURLE_UNSUPPORTED_PROTOCOL: .unsupportedURL
        case ERRAND_CURLE_URL_MALFORMAT: .badURL
        case ERRAND_CURLE_COULDNT_RESOLVE_HOST, ERRAND_CURLE_COULDNT_RESOLVE_PROXY: .cannotFindHost
        case ERRAND_CURLE_COULDNT_CONNECT, ERRAND_CURLE_PROXY: .cannotConnectToHost
        case ERRAND_CURLE_GOT_NOTHING, ERRAND_CURLE_WEIRD_SERVER_REPLY: .badServerResponse
        case ERRAND_CURLE_PARTIAL_FILE, ERRAND_CURLE_RECV_ERROR, ERRAND_CURLE_SEND_ERROR, ERRAND_CURLE_HTTP2,
            ERRAND_CURLE_HTTP2_STREAM, ERRAND_CURLE_SEND_FAIL_REWIND:
            .networkConnectionLost
        case ERRAND_CURLE_BAD_CONTENT_ENCODING: .cannotDecodeContentData
        case ERRAND_CURLE_PEER_FAILED_VERIFICATION, ERRAND_CURLE_SSL_PINNEDPUBKEYNOTMATCH: .serverCertificateUntrusted
        case ERRAND_CURLE_SSL_CONNECT_ERROR, ERRAND_CURLE_SSL_CERTPROBLEM, ERRAND_CURLE_SSL_CIPHER,
            ERRAND_CURLE_SSL_CACERT_BADFILE:
            .secureConnectionFailed
        case ERRAND_CURLE_SSL_CLIENTCERT: .clientCertificateRequired
        case ERRAND_CURLE_TOO_MANY_REDIRECTS: .httpTooManyRedirects
        case ERRAND_CURLE_READ_ERROR: .cannotOpenFile
        default: .unknown
        }
    }
}
