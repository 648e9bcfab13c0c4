import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The one form an ``ErrandError/transport(_:)`` description takes, whichever transport made the
/// error: what happened in words, the code and the transport's own account, and the URL with
/// its credentials masked —
/// `The network connection was lost (URLError -1005: Recv failure: Connection reset by peer) for https://api.example.com/feed?token=<redacted>`.
///
/// The words are Errand's own, as Foundation on Linux describes every code alike ("The
/// operation could not be completed"), which is left out.
enum TransportFailureText {
    static func describe(_ error: URLError) -> String {
        let words = words(for: error.code)
        let account = account(of: error, besides: words).map { ": \($0)" } ?? ""
        let target = failingURL(of: error).map { " for \(masked($0))" } ?? ""
        return "\(words) (URLError \(error.code.rawValue)\(account))\(target)"
    }

    /// `url` with what ``Redaction/credentials`` masks and what the debug log masks in a
    /// request's URL (query items whose names mark a secret: `X-Amz-Signature`) replaced.
    private static func masked(_ url: URL) -> String {
        Redaction.credentials.url(string: Redactor.url(url))
    }

    /// The URL the error names: Foundation's key for it, or its older key holding it as text.
    static func failingURL(of error: URLError) -> URL? {
        error.failingURL ?? (error.userInfo[failingURLStringKey] as? String).flatMap(URL.init(string:))
    }

    /// `NSURLErrorFailingURLStringErrorKey`, which Foundation deprecates but still fills in.
    private static let failingURLStringKey = "NSErrorFailingURLStringKey"

    /// The transport's message (libcurl's, FoundationNetworking's), masked; `nil` when there is
    /// none, when it is Foundation's placeholder, or when it only repeats `words`.
    private static func account(of error: URLError, besides words: String) -> String? {
        guard let message = error.userInfo[NSLocalizedDescriptionKey] as? String else { return nil }
        let trimmed = message.trimmingCharacters(in: CharacterSet.whitespacesAndNewlines.union(["."]))
        guard !trimmed.isEmpty, !trimmed.hasPrefix("The operation could not be completed"),
            trimmed.caseInsensitiveCompare(words) != .orderedSame
        else { return nil }
        return Redaction.credentials.text(trimmed)
    }

    /// What `code` means, in a few words.
    static func words(for code: URLError.Code) -> String {
        switch code {
        case .cannotConnectToHost: "Could not connect to the server"
        case .networkConnectionLost: "The network connection was lost"
        case .timedOut: "The request timed out"
        case .cannotFindHost: "The server's host name could not be found"
        case .dnsLookupFailed: "The host name lookup failed"
        case .notConnectedToInternet: "There is no network connection"
        case .badServerResponse: "The server's answer was not valid HTTP"
        case .zeroByteResource: "The server answered with nothing"
        case .cannotDecodeContentData, .cannotDecodeRawData: "The response body could not be decoded"
        case .cannotParseResponse: "The response could not be parsed"
        case .badURL: "The URL is not valid"
        case .unsupportedURL: "The request cannot be sent"
        case .httpTooManyRedirects: "There were too many redirects"
        case .redirectToNonExistentLocation: "A redirect led nowhere"
        case .resourceUnavailable: "The resource is unavailable"
        case .userAuthenticationRequired, .userCancelledAuthentication: "Authentication is required"
        case .dataLengthExceedsMaximum: "The response is too large"
        case .secureConnectionFailed: "The secure connection failed"
        case .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateHasUnknownRoot,
            .serverCertificateNotYetValid:
            "The server's certificate is not trusted"
        case .clientCertificateRejected: "The server rejected the client certificate"
        case .clientCertificateRequired: "The server requires a client certificate"
        case .cannotOpenFile, .cannotCreateFile, .cannotWriteToFile, .cannotMoveFile, .cannotRemoveFile,
            .cannotCloseFile, .fileDoesNotExist, .fileIsDirectory, .noPermissionsToReadFile:
            "A file of the request could not be used"
        case .cancelled: "The request was cancelled"
        case .dataNotAllowed, .internationalRoamingOff, .callIsActive: "The network may not be used now"
        default: "The transfer failed"
        }
    }
}
