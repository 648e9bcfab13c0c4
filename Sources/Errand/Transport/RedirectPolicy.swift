import Foundation

/// Decides where a redirect leads and what the next request keeps, the way browsers do, and
/// closes what URLSession on Linux leaves open: credentials never follow a redirect to another
/// origin, an `https` request is never continued over plain `http`, and 307/308 keep the body
/// (a streamed body, which cannot be sent twice, ends the request there instead).
struct RedirectPolicy: Sendable {
    /// Redirects followed before failing with ``ErrandError/redirectRefused(_:)`` — a loop, or
    /// a chain too long to be one. Default `16`, as Apple's URLSession.
    var limit = 16

    /// Whether `statusCode` is a redirect this policy follows (when the response has a `Location`).
    static func isRedirect(_ statusCode: Int) -> Bool {
        [301, 302, 303, 307, 308].contains(statusCode)
    }

    /// The request to send after `request` got `statusCode` with `location`, the `redirectCount`-th
    /// redirect so far; or the error that ends the request instead.
    func next(
        after request: TransportRequest, statusCode: Int, location: String, redirectCount: Int
    ) -> Result<TransportRequest, ErrandError> {
        guard redirectCount < limit else {
            return .failure(
                .redirectRefused("\(request.url.absoluteString) redirects again after \(limit) redirects: a loop?"))
        }
        guard let target = URL(string: location, relativeTo: request.url)?.absoluteURL,
            let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https", target.host != nil
        else {
            return .failure(
                .redirectRefused("\(request.url.absoluteString) redirects to an unusable location \"\(location)\""))
        }
        if request.url.scheme?.lowercased() == "https" && scheme == "http" {
            return .failure(
                .redirectRefused("\(request.url.absoluteString) redirects from HTTPS to HTTP: \(target.absoluteString)")
            )
        }
        var next = request
        next.url = target
        if !Self.sameOrigin(request.url, target) {
            next.headers = next.headers.filter { !request.isCredentialHeader($0.key) }
        }
        if Self.becomesGet(method: request.method, statusCode: statusCode) {
            next.method = "GET"
            next.body = nil
            next.bodyFileURL = nil
            next.bodyFileOffset = 0
            next.bodyStream = nil
            next.headers = next.headers.filter { !["content-type", "content-length"].contains($0.key.lowercased()) }
        }
        if next.bodyStream != nil {
            return .failure(
                .redirectRefused(
                    "\(request.url.absoluteString) redirects with \(statusCode) to \(target.absoluteString), which"
                        + " needs the body again, but a streamed body is sent only once"))
        }
        return .success(next)
    }

    /// 303 turns anything but HEAD into GET; 301 and 302 turn POST into GET, as every browser does.
    private static func becomesGet(method: String, statusCode: Int) -> Bool {
        switch statusCode {
        case 303: method.uppercased() != "HEAD"
        case 301, 302: method.uppercased() == "POST"
        default: false
        }
    }

    /// Scheme, host and port all equal, the port defaulted from the scheme.
    static func sameOrigin(_ first: URL, _ second: URL) -> Bool {
        first.scheme?.lowercased() == second.scheme?.lowercased()
            && first.host?.lowercased() == second.host?.lowercased() && port(of: first) == port(of: second)
    }

    private static func port(of url: URL) -> Int? {
        url.port ?? (url.scheme?.lowercased() == "https" ? 443 : url.scheme?.lowercased() == "http" ? 80 : nil)
    }
}
