/// The httpbin endpoints that test how a client behaves rather than what it sends:
/// redirects, cookies, content encoding and trickled bodies; and a fixed body for benchmarks.
enum ClientBehaviourRoutes {
    static let all: [Route] = RedirectRoutes.all + CookieRoutes.all + EncodingRoutes.all + BenchmarkRoutes.all
}
