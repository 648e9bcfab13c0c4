import Foundation

/// What a ``Transport`` reports about a request in flight.
public enum TransportEvent: Sendable {
    /// The status line and header fields arrived.
    case responseHead(statusCode: Int, headers: [String: String])
    /// A chunk of the body arrived.
    case body(Data)
    /// Part of the request body was sent: bytes so far, and the total when known.
    case uploadProgress(bytesSent: Int64, totalBytes: Int64?)
    /// How the exchange went: timings and protocol, reported by transports that measure them
    /// (``CurlTransport``) just before ``completed(_:)``; others never send it.
    case metrics(TransportMetrics)
    /// The exchange ended: `nil` when the whole response arrived (whatever its status), else why it failed.
    case completed(ErrandError?)
}

extension TransportEvent {
    /// The events a transport that has the whole `outcome` at hand reports, in order: the head,
    /// the body in one chunk when there is one, then the completion.
    static func events(answering outcome: Result<Response, ErrandError>) -> [TransportEvent] {
        switch outcome {
        case .success(let response):
            let head = TransportEvent.responseHead(statusCode: response.statusCode, headers: response.headers)
            return response.data.isEmpty ? [head, .completed(nil)] : [head, .body(response.data), .completed(nil)]
        case .failure(let error):
            return [.completed(error)]
        }
    }
}
