import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Corrects `URLError` codes that would mislead a caller about what a server did. Both Linux
/// transports end in libcurl — ``CurlTransport`` directly, FoundationNetworking underneath
/// ``URLSessionTransport`` — and both inherit libcurl's view of two faults:
/// - A reply that is not HTTP at all is refused as "HTTP/0.9", which libcurl reports as an
///   unsupported protocol and both map to `.unsupportedURL`, as if the caller's URL were wrong.
///   For an `http` or `https` URL it can only be the server's reply: `.badServerResponse`.
/// - FoundationNetworking reports `.unknown` for the libcurl results it does not map; its
///   message, libcurl's own, still says which. A body cut short by a closed connection becomes
///   `.networkConnectionLost` and a body that cannot be decoded `.cannotDecodeContentData`, the
///   codes Apple's URLSession and ``CurlTransport`` give; a server certificate libcurl would not
///   verify (`CURLE_PEER_FAILED_VERIFICATION`) becomes `.serverCertificateUntrusted`. An
///   unrecognised message stays `.unknown`.
enum TransportErrorCode {
    /// `code` corrected for a failed request to `url`, given the failure's `message`.
    static func corrected(_ code: URLError.Code, url: URL?, message: String) -> URLError.Code {
        switch code {
        case .unsupportedURL where ["http", "https"].contains(url?.scheme?.lowercased()):
            return .badServerResponse
        case .unknown:
            if message.hasPrefix("transfer closed with") { return .networkConnectionLost }
            if message.hasPrefix("Error while processing content unencoding") { return .cannotDecodeContentData }
            if untrustedCertificateMessages.contains(where: message.hasPrefix) { return .serverCertificateUntrusted }
            return code
        default:
            return code
        }
    }

    /// How libcurl's messages for `CURLE_PEER_FAILED_VERIFICATION` begin, with OpenSSL: an
    /// unknown or self-signed issuer, an expired certificate, a name that does not match.
    private static let untrustedCertificateMessages = [
        "SSL certificate problem", "SSL: no alternative certificate subject name", "SSL: certificate subject name",
        "SSL: unable to obtain common name", "SSL peer certificate or SSH remote key was not OK",
    ]
}
