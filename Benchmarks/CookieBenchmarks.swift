import Errand
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What the cookie jar costs a request: finding and ordering the cookies for its URL and
/// writing them as the `Cookie` value (what both transports do per hop), with 0, 10 and 1,000
/// cookies stored — the 1,000 across 100 sites, 10 of them the request's — and storing one
/// response's `Set-Cookie`; beside it, what Foundation's `HTTPCookieStorage` (the store both
/// transports used before) takes for the same 10 cookies.
enum CookieBenchmarks {
    static let names = [
        "cookies.send-0", "cookies.send-10", "cookies.send-1000", "cookies.store", "cookies.foundation-send-10",
    ]

    static func run(_ plan: Plan, progress: (String) -> Void) throws -> [Measurement] {
        guard let url = URL(string: "https://api.example.com/v1/users/42") else { return [] }
        var results: [Measurement] = []
        for (name, sites) in zip(names.prefix(3), [0, 1, 100]) where plan.includes(name) {
            progress(name)
            let jar = filledJar(sites: sites)
            let (total, warmup) = plan.counts(default: 200_000)
            results.append(
                Microbenchmark.measure(name, iterations: total, warmup: warmup) {
                    blackHole(jar.cookieHeader(for: url) ?? "")
                })
        }
        if plan.includes(names[3]) {
            progress(names[3])
            let jar = CookieJar()
            let fields = ["session=3f1c9a7e2b; Path=/; Max-Age=3600; Secure; HttpOnly; SameSite=Lax"]
            let (total, warmup) = plan.counts(default: 200_000)
            results.append(
                Microbenchmark.measure(names[3], iterations: total, warmup: warmup) {
                    jar.storeCookies(fromSetCookieFields: fields, for: url)
                })
        }
        if plan.includes(names[4]) {
            progress(names[4])
            let storage = HTTPCookieStorage.sharedCookieStorage(forGroupContainerIdentifier: UUID().uuidString)
            for cookie in filledJar(sites: 1).allCookies {
                let properties: [HTTPCookiePropertyKey: Any] = [
                    .name: cookie.name, .value: cookie.value, .domain: cookie.domain, .path: cookie.path,
                    .expires: cookie.expiresAt ?? Date.distantFuture,
                ]
                if let made = HTTPCookie(properties: properties) { storage.setCookie(made) }
            }
            let (total, warmup) = plan.counts(default: 200_000)
            results.append(
                Microbenchmark.measure(names[4], iterations: total, warmup: warmup) {
                    let cookies = storage.cookies(for: url) ?? []
                    blackHole(HTTPCookie.requestHeaderFields(with: cookies)["Cookie"] ?? "")
                })
        }
        return results
    }

    /// A jar with 10 cookies for each of `sites` sites, the first being the benchmark URL's.
    private static func filledJar(sites: Int) -> CookieJar {
        let jar = CookieJar()
        for site in 0..<sites {
            let host = site == 0 ? "api.example.com" : "www.site\(site).example"
            for index in 0..<10 {
                jar.add(
                    Cookie(
                        name: "cookie\(index)", value: "value-\(site)-\(index)", domain: host,
                        path: index.isMultiple(of: 2) ? "/" : "/v1", expiresAt: Date().addingTimeInterval(86_400)))
            }
        }
        return jar
    }

    @inline(never) private static func blackHole(_ value: String) {
        if value.utf8.count == Int.max { print(value) }
    }
}
