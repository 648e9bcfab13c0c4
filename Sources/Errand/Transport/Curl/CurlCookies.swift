import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends and stores cookies through a configuration's `HTTPCookieStorage`, as URLSession does.
struct CurlCookies: Sendable {
    private let storage: HTTPCookieStorage?

    /// The configuration's storage, or none when it does not set cookies.
    init(configuration: URLSessionConfiguration) {
        storage = configuration.httpShouldSetCookies ? configuration.httpCookieStorage : nil
    }

    /// The `Cookie` value stored for `request`'s URL; `nil` when none, or the request sets its own.
    func header(for request: TransportRequest) -> String? {
        guard let storage, request.headers.headerField("Cookie") == nil,
            let cookies = storage.cookies(for: request.url), !cookies.isEmpty
        else { return nil }
        return HTTPCookie.requestHeaderFields(with: cookies)["Cookie"]
    }

    /// Stores the cookies of a response's `Set-Cookie` fields for `url`.
    func store(_ setCookieValues: [String], from url: URL) {
        guard let storage, !setCookieValues.isEmpty else { return }
        // One value at a time: an expiry date contains a comma, so joined values parse wrongly.
        let cookies = setCookieValues.flatMap {
            HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": $0], for: url)
        }
        storage.setCookies(cookies, for: url, mainDocumentURL: nil)
    }
}
