import Errand
import Foundation
import Testing

@Suite("URL building follows YTKNetwork's buildRequestUrl")
struct URLBuildingTests {
    struct Request: BaseRequest {
        var url: String
        var baseUrl = ""
        var cdnUrl = ""
        var useCDN = false
    }

    struct AppendQuery: URLFilter {
        let pair: String
        func filterUrl(_ originUrl: String, request: any BaseRequest) -> String {
            originUrl + (originUrl.contains("?") ? "&" : "?") + pair
        }
    }

    func build(_ request: Request, base: String = "", cdn: String = "", filters: [any URLFilter] = []) throws -> String
    {
        let config = NetworkConfig()
        config.baseUrl = base
        config.cdnUrl = cdn
        filters.forEach(config.addUrlFilter)
        return try NetworkAgent(config: config, transport: StubTransport { _ in Response(statusCode: 200) })
            .buildRequestUrl(request).absoluteString
    }

    @Test func baseWithAndWithoutTrailingSlash() throws {
        #expect(try build(Request(url: "users"), base: "https://api.example.com") == "https://api.example.com/users")
        #expect(try build(Request(url: "users"), base: "https://api.example.com/") == "https://api.example.com/users")
        #expect(try build(Request(url: "/users"), base: "https://api.example.com") == "https://api.example.com/users")
    }

    @Test func nestedBasePath() throws {
        #expect(
            try build(Request(url: "users"), base: "https://api.example.com/v1") == "https://api.example.com/v1/users")
        #expect(
            try build(Request(url: "users"), base: "https://api.example.com/v1/") == "https://api.example.com/v1/users")
        // A leading slash resolves from the host root, as a link would.
        #expect(
            try build(Request(url: "/users"), base: "https://api.example.com/v1") == "https://api.example.com/users")
    }

    @Test func pathThatLooksLikeAScheme() throws {
        #expect(
            try build(Request(url: "httpEndpoint"), base: "https://api.example.com/v1")
                == "https://api.example.com/v1/httpEndpoint")
        #expect(
            try build(Request(url: "https-status"), base: "https://api.example.com")
                == "https://api.example.com/https-status")
    }

    /// URLs are joined as text when both parts are plain; whatever the shape, the result must be
    /// what RFC 3986 resolution (Foundation's) gives for the same base and path.
    @Test(arguments: [
        "users", "/users", "users/42", "users?id=1", "users#top", "/users?id=1#top", "/", "./users",
        "../users", "a/./b", "a/../b", "a/..", ".hidden", "..more", "a/b:c", "?q=1", "#frag", "%7Euser",
        "users/", "v2/users/me",
    ])
    func textJoinAgreesWithRFC3986Resolution(path: String) throws {
        for base in [
            "https://api.example.com", "https://api.example.com/", "https://api.example.com/v1",
            "https://api.example.com/v1/", "http://127.0.0.1:8080/api/v2", "https://user@host.example/x/y/",
        ] {
            let slashed = base.hasSuffix("/") ? base : base + "/"
            let expected = URL(string: path, relativeTo: URL(string: slashed))?.absoluteURL.absoluteString
            #expect(try build(Request(url: path), base: base) == expected, "base \(base)")
        }
    }

    /// Foundation reads `""` as no URL at all; an empty `url` means the base itself.
    @Test func emptyPathIsTheBase() throws {
        #expect(try build(Request(url: ""), base: "https://api.example.com/v1") == "https://api.example.com/v1/")
    }

    /// A base's query and fragment follow its path: the `/` that makes `users` extend the path
    /// goes before them, and a path replaces them, as RFC 3986 says. Appending `/` to the text
    /// made `https://api.example.com/v1?key=1` resolve `users` to `https://api.example.com/users`,
    /// and an empty path under such a base failed.
    @Test(arguments: [
        ("https://api.example.com/v1?key=1", "users", "https://api.example.com/v1/users"),
        ("https://api.example.com/v1?key=1", "/users", "https://api.example.com/users"),
        ("https://api.example.com/v1?key=1", "users?id=2", "https://api.example.com/v1/users?id=2"),
        ("https://api.example.com/v1?key=1", "", "https://api.example.com/v1/?key=1"),
        ("https://api.example.com/v1#top", "users", "https://api.example.com/v1/users"),
        ("https://api.example.com/v1#top", "", "https://api.example.com/v1/"),
        ("https://api.example.com?key=1", "users", "https://api.example.com/users"),
        ("https://api.example.com/v1?key=1", "?q=1", "https://api.example.com/v1/?q=1"),
    ])
    func baseWithQueryOrFragment(base: String, path: String, expected: String) throws {
        #expect(try build(Request(url: path), base: base) == expected)
    }

    /// A `.` or `..` segment in the base's path is removed by resolution, whichever way the
    /// path joins; joined as text it was kept (`https://h.example/./users`).
    @Test(arguments: [
        ("https://api.example.com/./", "users", "https://api.example.com/users"),
        ("https://api.example.com/v1/../v2", "users", "https://api.example.com/v2/users"),
        ("https://api.example.com/v1/..", "users", "https://api.example.com/users"),
    ])
    func dotSegmentsInTheBasePath(base: String, path: String, expected: String) throws {
        #expect(try build(Request(url: path), base: base) == expected)
    }

    @Test func queryInURLSurvives() throws {
        #expect(
            try build(Request(url: "search?q=swift"), base: "https://api.example.com/v1")
                == "https://api.example.com/v1/search?q=swift")
    }

    @Test func absoluteURLOverridesBaseAndSkipsFilters() throws {
        let url = try build(
            Request(url: "https://other.example.org/x?y=1", baseUrl: "https://own.example.com"),
            base: "https://api.example.com",
            filters: [AppendQuery(pair: "v=1")])
        #expect(url == "https://other.example.org/x?y=1")
    }

    @Test func requestBaseOverridesConfigBase() throws {
        #expect(
            try build(Request(url: "a", baseUrl: "https://own.example.com/p"), base: "https://api.example.com")
                == "https://own.example.com/p/a")
    }

    @Test func cdnUsesRequestThenConfigCDN() throws {
        let base = "https://api.example.com"
        let cdn = "https://cdn.example.com/static"
        #expect(
            try build(Request(url: "img.png", useCDN: true), base: base, cdn: cdn)
                == "https://cdn.example.com/static/img.png")
        #expect(
            try build(
                Request(url: "img.png", cdnUrl: "https://own-cdn.example.com", useCDN: true), base: base, cdn: cdn)
                == "https://own-cdn.example.com/img.png")
        #expect(
            try build(
                Request(url: "img.png", cdnUrl: "https://own-cdn.example.com", useCDN: false), base: base, cdn: cdn)
                == "https://api.example.com/img.png")
    }

    @Test func filtersRunInOrderBeforeTheBase() throws {
        let url = try build(
            Request(url: "items"), base: "https://api.example.com",
            filters: [AppendQuery(pair: "a=1"), AppendQuery(pair: "b=2")])
        #expect(url == "https://api.example.com/items?a=1&b=2")
    }

    @Test func clearingFiltersRemovesThem() {
        let config = NetworkConfig()
        config.addUrlFilter(AppendQuery(pair: "a=1"))
        #expect(config.urlFilters.count == 1)
        config.clearUrlFilters()
        #expect(config.urlFilters.isEmpty)
    }

    @Test func relativeURLWithoutABaseIsInvalid() {
        #expect(throws: ErrandError.invalidURL("users")) { try build(Request(url: "users")) }
    }

    /// What a URL may not hold is percent-encoded once, and an escape already there is kept.
    @Test(arguments: [
        ("/anything?hd=[1]", "https://api.example.com/anything?hd=%5B1%5D"),
        ("/books?filter[type]=book", "https://api.example.com/books?filter%5Btype%5D=book"),
        ("/a b/ü?q=é #top", "https://api.example.com/a%20b/%C3%BC?q=%C3%A9%20#top"),
        ("/a%20b?x=%2F&y=%c3%a9", "https://api.example.com/a%20b?x=%2F&y=%c3%a9"),
        ("/tags/a%2Fb?q=[x]", "https://api.example.com/tags/a%2Fb?q=%5Bx%5D"),
        ("/rate?q=100%", "https://api.example.com/rate?q=100%25"),
        ("/odd%zz", "https://api.example.com/odd%25zz"),
        ("/page#one#two", "https://api.example.com/page#one%23two"),
        ("./up?x=[1]", "https://api.example.com/v1/up?x=%5B1%5D"),
        ("https://other.example.org/x?y=[2]", "https://other.example.org/x?y=%5B2%5D"),
        ("http://[::1]:8080/a?x=[1]", "http://[::1]:8080/a?x=%5B1%5D"),
    ])
    func invalidCharactersAreEncodedOnce(url: String, expected: String) throws {
        #expect(try build(Request(url: url), base: "https://api.example.com/v1/") == expected)
    }

    @Test func aFilterAppendingARawValueIsEncodedOnce() throws {
        #expect(
            try build(Request(url: "items"), base: "https://api.example.com", filters: [AppendQuery(pair: "sig=a b|c")])
                == "https://api.example.com/items?sig=a%20b%7Cc")
    }
}
