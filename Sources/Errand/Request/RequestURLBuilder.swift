import Foundation

/// Resolves a request's `url` the way YTKNetwork's `buildRequestUrl` does.
enum RequestURLBuilder {
    /// An absolute `url` wins as is. Otherwise the URL filters run in order, and the result is
    /// resolved against the base — the request's own, else the config's; the CDN's with `useCDN` —
    /// after giving the base a trailing `/`, so that `"users"` extends its path and `"/users"`
    /// starts from the host root.
    static func url(for request: any BaseRequest, config: NetworkConfig) throws(ErrandError) -> URL {
        if let absolute = absoluteURL(request.url) {
            return absolute
        }
        let path = config.urlFilters.reduce(request.url) { $1.filterUrl($0, request: request) }
        let base = baseURLString(for: request, config: config)
        let baseURL = URL(string: base.isEmpty || base.hasSuffix("/") ? base : base + "/")
        guard let resolved = URL(string: path, relativeTo: baseURL)?.absoluteURL, isAbsolute(resolved) else {
            throw .invalidURL(base.isEmpty ? path : "\(base) + \(path)")
        }
        return resolved
    }

    /// The base `url` resolves against: the request's own, else the config's; the CDN's with `useCDN`.
    static func baseURLString(for request: any BaseRequest, config: NetworkConfig) -> String {
        if request.useCDN {
            return request.cdnUrl.isEmpty ? config.cdnUrl : request.cdnUrl
        }
        return request.baseUrl.isEmpty ? config.baseUrl : request.baseUrl
    }

    private static func absoluteURL(_ string: String) -> URL? {
        guard let url = URL(string: string), isAbsolute(url) else { return nil }
        return url
    }

    /// A URL with both a scheme and a host, so `httpEndpoint` or `localhost:8080` never count.
    private static func isAbsolute(_ url: URL) -> Bool {
        url.scheme != nil && !(url.host ?? "").isEmpty
    }
}
