import Foundation

/// What a ``Transport`` reports about a request in flight.
public enum TransportEvent: Sendable {
    /// An interim (1xx) head arrived — `103 Early Hints`, `104 Upload Resumption Supported` —
    /// and the final one is still to come. `101 Switching Protocols` is final, a
    /// ``responseHead(statusCode:headers:)``.
    case interimHead(statusCode: Int, headers: [String: String])
    /// The status line and header fields arrived.
    case responseHead(statusCode: Int, headers: [String: String])
    /// A chunk of the body arrived.
    case body(Data)
    /// The trailer fields that followed the body (a chunked HTTP/1.1 body's, an HTTP/2
    /// stream's closing fields), joined as the head's are; sent once, after the last chunk and
    /// before ``completed(_:)``, and only when there are some.
    case trailers([String: String])
    /// Part of the request body was sent: bytes so far, and the total when known.
    case uploadProgress(bytesSent: Int64, totalBytes: Int64?)
    /// How the exchange went: timings and protocol, reported by transports that measure them
    /// (``CurlTransport``) just before ``completed(_:)``; others never send it.
    case metrics(TransportMetrics)
    /// The exchange ended: `nil` when the whole response arrived (whatever its status), else why it failed.
    case completed(ErrandError?)
}

extension TransportEvent {
    /// Reports `outcome` as a transport that has it whole at hand does, in order: the head, the
    /// body in one chunk when there is one, then the completion.
    static func answer(_ outcome: Result<Response, ErrandError>, to events: (TransportEvent) -> Void) {
        switch outcome {
        case .success(let response):
            events(.responseHead(statusCode: response.statusCode, headers: response.headers))
            if !response.data.isEmpty { events(.body(response.data)) }
            if !response.trailers.isEmpty { events(.trailers(response.trailers)) }
            events(.completed(nil))
        case .failure(let error):
            events(.completed(error))
        }
    }
}
