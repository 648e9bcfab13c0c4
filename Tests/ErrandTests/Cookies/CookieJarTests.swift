import Errand
import Foundation
import Testing

/// The jar's storage and retrieval rules (RFC 6265bis §5.6–5.8), without a server: what each
/// `Set-Cookie` a response from one URL carries makes a request to another send.
struct CookieJarTests {
    /// The `Cookie` value a request to `url` sends after `fields` came from `origin`.
    private func sent(
        _ fields: [String], from origin: String = "http://home.example.org/", to url: String? = nil,
        in jar: CookieJar = CookieJar()
    ) throws -> String? {
        jar.storeCookies(fromSetCookieFields: fields, for: try #require(URL(string: origin)))
        let cookies = jar.cookies(for: try #require(URL(string: url ?? origin)))
        return cookies.isEmpty
            ? nil
            : cookies.map { $0.name.isEmpty ? $0.value : "\($0.name)=\($0.value)" }
                .joined(separator: "; ")
    }

    @Test func oneFieldIsOneCookieWhateverCommasItHolds() throws {
        #expect(try sent(["a=b, c=d"]) == "a=b, c=d")
        #expect(try sent(["a=\"b,c\"; Path=/"]) == "a=\"b,c\"")
        #expect(try sent(["a=b; Expires=Fri, 07 Aug 2099 08:04:19 GMT"]) == "a=b")
    }

    @Test func aCookieWithoutANameIsIgnored() throws {
        #expect(try sent(["bare", "=value", " =spaced", "=", "; Path=/", "kept=1"]) == "kept=1")
    }

    @Test func aCookieAddedWithALineBreakIsNotAdded() throws {
        let jar = CookieJar()
        jar.add(Cookie(name: "a", value: "1\r\nX-Injected: 1", domain: "home.example.org"))
        jar.add(Cookie(name: "b\n", value: "1", domain: "home.example.org"))
        jar.add(Cookie(name: "c", value: "1", domain: "home.example.org"))
        #expect(jar.cookieHeader(for: try #require(URL(string: "http://home.example.org/"))) == "c=1")
    }

    @Test func aControlCharacterVoidsTheWholeField() throws {
        #expect(try sent(["a=b\u{1}c", "d=e"]) == "d=e")
        #expect(try sent(["a=b\tc"]) == "a=b\tc", "a tab is no control character here")
    }

    @Test func aNameAndValueOfMoreThan4096BytesAreRefused() throws {
        #expect(try sent(["a=" + String(repeating: "x", count: 4096)]) == nil)
        #expect(try sent(["a=" + String(repeating: "x", count: 4095)])?.count == 4097, "4,096 bytes are allowed")
    }

    @Test func pathsMatchAtSlashesAndTheDefaultIsTheRequestsFolder() throws {
        let jar = CookieJar()
        _ = try sent(["a=1; Path=/foo"], in: jar)
        #expect(try sent([], to: "http://home.example.org/foo/bar", in: jar) == "a=1")
        #expect(try sent([], to: "http://home.example.org/foobar", in: jar) == nil)
        #expect(try sent([], to: "http://home.example.org/", in: jar) == nil)
        let folder = CookieJar()
        _ = try sent(["b=2"], from: "http://home.example.org/dir/page", in: folder)
        #expect(folder.allCookies.first?.path == "/dir")
        _ = try sent(["c=3; Path=relative"], from: "http://home.example.org/x/y", in: folder)
        #expect(folder.allCookies.first { $0.name == "c" }?.path == "/x", "a relative Path is the default")
    }

    @Test func aRequestPathIsComparedWithItsUnreservedEscapesDecoded() throws {
        let jar = CookieJar()
        _ = try sent(["a=1; Path=/foo"], in: jar)
        #expect(try sent([], to: "http://home.example.org/f%6Fo/bar", in: jar) == "a=1")
        #expect(try sent([], to: "http://home.example.org/f%2Fo", in: jar) == nil, "%2F is no unreserved character")
        let escaped = CookieJar()
        _ = try sent(["b=1; Path=/f%6Fo"], in: escaped)
        #expect(try sent([], to: "http://home.example.org/foo", in: escaped) == nil, "a Path is taken as written")
    }

    @Test func longerPathsGoFirstThenOlderCookies() throws {
        let jar = CookieJar()
        _ = try sent(["a=1; Path=/", "b=2; Path=/foo", "c=3; Path=/"], from: "http://home.example.org/foo/x", in: jar)
        #expect(try sent([], to: "http://home.example.org/foo/x", in: jar) == "b=2; a=1; c=3")
        #expect(jar.cookieHeader(for: try #require(URL(string: "http://home.example.org/foo/x"))) == "b=2; a=1; c=3")
        #expect(jar.cookieHeader(for: try #require(URL(string: "http://other.example.org/"))) == nil)
        _ = try sent(["a=new; Path=/"], in: jar)
        #expect(
            try sent([], to: "http://home.example.org/foo/x", in: jar) == "b=2; a=new; c=3",
            "a replaced cookie keeps its age")
    }

    @Test func aDomainCookieReachesSubdomainsAndAHostOnlyOneDoesNot() throws {
        let jar = CookieJar()
        _ = try sent(["wide=1; Domain=.Example.ORG", "narrow=2"], in: jar)
        #expect(try sent([], to: "http://sub.home.example.org/", in: jar) == "wide=1")
        #expect(try sent([], to: "http://home.example.org/", in: jar) == "wide=1; narrow=2")
        #expect(try sent([], to: "http://notexample.org/", in: jar) == nil)
    }

    @Test func aDomainOutsideTheHostOrAPublicSuffixIsRefused() throws {
        #expect(try sent(["a=1; Domain=other.org"]) == nil)
        #expect(try sent(["a=1; Domain=sub.home.example.org"]) == nil)
        #expect(try sent(["a=1; Domain=org"], to: "http://other.example.org/") == nil)
        #expect(try sent(["a=1; Domain=me.github.io"], from: "http://me.github.io/") == "a=1")
        // Multi-label suffixes need the full list, which Apple platforms do not load.
        if PublicSuffixList.system.isComplete {
            #expect(try sent(["a=1; Domain=co.uk"], from: "http://www.example.co.uk/") == nil)
            #expect(try sent(["a=1; Domain=github.io"], from: "http://me.github.io/") == nil)
        }
        // The suffix's own host may set a host-only cookie naming it.
        let host = CookieJar()
        #expect(try sent(["a=1; Domain=org"], from: "http://org/", in: host) == "a=1")
        #expect(host.allCookies.first?.isHostOnly == true)
    }

    @Test func anEmptyDomainLeavesTheCookieHostOnly() throws {
        let jar = CookieJar()
        #expect(try sent(["a=1; Domain="], in: jar) == "a=1")
        #expect(jar.allCookies.first?.isHostOnly == true)
    }

    @Test func anIPAddressMatchesOnlyItself() throws {
        #expect(try sent(["a=1; Domain=0.0.1"], from: "http://127.0.0.1/") == nil)
        #expect(try sent(["a=1"], from: "http://127.0.0.1/") == "a=1")
    }

    @Test func secureCookiesNeedASecureOriginAndASecureRequest() throws {
        #expect(try sent(["s=1; Secure"]) == nil, "set over plain http")
        let jar = CookieJar()
        _ = try sent(["s=1; Secure"], from: "https://home.example.org/", in: jar)
        #expect(try sent([], to: "http://home.example.org/", in: jar) == nil, "sent over plain http")
        #expect(try sent([], to: "https://home.example.org/", in: jar) == "s=1")
        #expect(try sent([], to: "wss://home.example.org/", in: jar) == "s=1")
        #expect(try sent(["l=1; Secure"], from: "http://localhost:8080/") == "l=1", "loopback counts as secure")
        #expect(try sent(["l=1; Secure"], from: "http://127.0.0.1:8080/") == "l=1")
    }

    @Test func plainHTTPCannotShadowASecureCookie() throws {
        let jar = CookieJar()
        _ = try sent(["s=secret; Secure"], from: "https://home.example.org/", in: jar)
        _ = try sent(["s=forged", "other=1"], from: "http://home.example.org/", in: jar)
        #expect(try sent([], to: "https://home.example.org/", in: jar) == "s=secret; other=1")
    }

    @Test func prefixesAreEnforced() throws {
        let origin = "https://home.example.org/"
        #expect(try sent(["__Secure-a=1"], from: origin) == nil)
        #expect(try sent(["__Secure-a=1; Secure"], from: origin) == "__Secure-a=1")
        #expect(try sent(["__Host-a=1; Secure"], from: origin) == nil, "no Path=/")
        #expect(try sent(["__Host-a=1; Secure; Path=/; Domain=example.org"], from: origin) == nil)
        #expect(try sent(["__host-a=1; Secure; Path=/"], from: origin) == "__host-a=1")
        #expect(try sent(["=__Secure-a=1; Secure"], from: origin) == nil)
    }

    @Test func maxAgeWinsOverExpiresAndNothingLivesPast400Days() throws {
        let jar = CookieJar()
        _ = try sent(["a=1; Max-Age=60; Expires=Fri, 07 Aug 2007 08:04:19 GMT"], in: jar)
        let expiry = try #require(jar.allCookies.first?.expiresAt)
        #expect(abs(expiry.timeIntervalSinceNow - 60) < 5)
        _ = try sent(["b=1; Max-Age=999999999999999999999"], in: jar)
        let capped = try #require(jar.allCookies.first { $0.name == "b" }?.expiresAt)
        #expect(abs(capped.timeIntervalSinceNow - 400 * 86_400) < 5)
        #expect(try sent(["c=1; Max-Age=0"]) == nil)
        #expect(try sent(["c=1; Max-Age=-1"]) == nil)
        #expect(try sent(["c=1; Max-Age=1x"]) == "c=1", "an invalid Max-Age is ignored")
        #expect(try sent(["c=1; Expires=Fri, 07 Aug 2007 08:04:19 GMT"]) == nil, "expired")
    }

    @Test func anExpiredCookieRemovesTheOneItReplaces() throws {
        let jar = CookieJar()
        _ = try sent(["a=1"], in: jar)
        #expect(try sent(["a=gone; Max-Age=0"], in: jar) == nil)
        #expect(jar.isEmpty)
    }

    @Test func aDomainKeepsAtMost180AndTheLeastRecentlyUsedInsecureOnesGoFirst() throws {
        let jar = CookieJar()
        _ = try sent(["keep=1; Secure"], from: "https://home.example.org/", in: jar)
        for index in 0..<200 { _ = try sent(["c\(index)=\(index)"], in: jar) }
        let names = Set(jar.allCookies.map(\.name))
        #expect(names.count <= 180)
        #expect(names.contains("keep"), "the secure cookie outlives the insecure ones")
        #expect(names.contains("c199") && !names.contains("c0"))
    }

    @Test func theJarHoldsAtMost3300CookiesInAll() throws {
        let jar = CookieJar()
        for index in 0..<3_400 { _ = try sent(["c=\(index)"], from: "http://h\(index).example.org/", in: jar) }
        #expect(jar.allCookies.count <= 3_300)
        #expect(jar.cookies(for: try #require(URL(string: "http://h3399.example.org/"))).count == 1)
    }

    @Test func removingADomainTakesItsSubdomainsToo() throws {
        let jar = CookieJar()
        _ = try sent(["a=1"], in: jar)
        _ = try sent(["b=1"], from: "http://api.home.example.org/", in: jar)
        _ = try sent(["c=1"], from: "http://other.org/", in: jar)
        jar.removeCookies(forDomain: "home.example.org")
        #expect(jar.allCookies.map(\.name) == ["c"])
        jar.removeAll()
        #expect(jar.isEmpty)
    }
}
