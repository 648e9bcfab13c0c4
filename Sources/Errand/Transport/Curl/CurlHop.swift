import Dispatch
import Foundation

/// One HTTP exchange of a request — the first, or one after a redirect — as the curl thread receives it.
struct CurlHop: Sendable {
    /// The request's number within its transport.
    let id: Int
    /// What to send, credentials already stripped if an earlier redirect left the origin.
    var request: TransportRequest
    /// The `Cookie` value from the cookie storage for this hop's URL, if any.
    var cookieHeader: String?
    /// Where the request's events go.
    let mailbox: CurlEventMailbox
    /// Redirects followed before this hop.
    var redirectCount = 0
    /// When the whole request must have ended, across redirects; `nil` for never.
    let deadline: DispatchTime?
    /// The public keys pinned per host, checked on every hop.
    var serverTrust = ServerTrust.system
    /// Where a streamed body's bytes come from; `nil` when the request has none.
    var bodyPump: BodyStreamPump? = nil
    /// Whether this hop sends again, on a new connection, a request an HTTP/2 connection dropped
    /// before any of its response arrived; a replay is never replayed.
    var isReplay = false
}

extension CurlHop {
    /// `seconds` as a timeout libcurl and `DispatchTime` can hold: NaN is the default 60, and
    /// anything else lies between a millisecond and about four months (an infinite one included).
    static func timeout(_ seconds: Double) -> Double {
        seconds.isNaN ? 60 : min(max(seconds, 0.001), 10_000_000)
    }
}
