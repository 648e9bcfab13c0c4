import Foundation
import Testing

@testable import Errand

/// What a private HTTP cache may store (RFC 9111 §3) and which variant answers a request
/// (§4.1), with cases from cache-tests.fyi's `cc-response`, `status`, `vary` and `vary-parse`.
@Suite("HTTP storage rules: what is stored, and which variant answers")
struct HTTPStorageRulesTests {
    static func mayStore(
        _ responseCacheControl: String? = nil, status: Int = 200, method: String = "GET",
        requestCacheControl: String? = nil, headers: [String: String] = [:]
    ) -> Bool {
        HTTPStorageRules.mayStore(
            method: method, statusCode: status, request: CacheControl(requestCacheControl),
            response: CacheControl(responseCacheControl), responseHeaders: headers)
    }

    @Test(arguments: [200, 203, 204, 299, 301, 302, 303, 307, 308, 400, 404, 410, 499, 500, 502, 503, 504, 599])
    func anyFinalStatusWithExplicitFreshnessIsStored(status: Int) {
        #expect(Self.mayStore("max-age=3600", status: status))
    }

    @Test func aHeuristicallyCacheableStatusNeedsNoDirective() {
        #expect(Self.mayStore(status: 200))
        #expect(Self.mayStore(status: 404))
        #expect(!Self.mayStore(status: 302), "302 needs explicit freshness")
        #expect(!Self.mayStore(status: 500))
        #expect(Self.mayStore(status: 302, headers: ["Expires": "Thu, 01 Jan 2099 00:00:00 GMT"]))
        #expect(Self.mayStore("public", status: 302))
        #expect(Self.mayStore("private", status: 302), "a private cache may keep a private response")
    }

    @Test func noStoreFromEitherSideWinsOverEverything() {
        #expect(!Self.mayStore("no-store"))
        #expect(!Self.mayStore("nO-StOrE"))
        #expect(!Self.mayStore("max-age=3600, no-store", headers: ["Expires": "Thu, 01 Jan 2099 00:00:00 GMT"]))
        #expect(!Self.mayStore("max-age=3600", requestCacheControl: "no-store"))
        #expect(Self.mayStore("no-cache"), "no-cache is stored, and revalidated on use")
    }

    @Test func mustUnderstandOverridesNoStoreForAKnownStatusOnly() {
        #expect(Self.mayStore("max-age=60, no-store, must-understand"))
        #expect(Self.mayStore("max-age=60, no-store, must-understand", status: 307))
        #expect(!Self.mayStore("max-age=60, no-store, must-understand", status: 599))
        #expect(!Self.mayStore("max-age=60, must-understand", status: 599), "an unknown status, even without no-store")
        #expect(!Self.mayStore("max-age=60, must-understand", requestCacheControl: "no-store"))
    }

    @Test func onlyGETAndOnlyWholeFinalResponsesAreStored() {
        #expect(!Self.mayStore("max-age=60", method: "HEAD"), "a HEAD answer only freshens the stored GET")
        #expect(!Self.mayStore("max-age=60", method: "POST"))
        #expect(!Self.mayStore("max-age=60", status: 206))
        #expect(!Self.mayStore("max-age=60", status: 304))
        #expect(!Self.mayStore("max-age=60", status: 101))
    }

    @Test func aVariantMatchesTheSameNormalizedValuesAndAbsenceOnlyAbsence() throws {
        let stored = try #require(
            HTTPStorageRules.variant(vary: "Foo, Bar,, baz", requestHeaders: ["foo": "1, 2", "Bar": "x"]))
        #expect(stored == ["foo": "1,2", "bar": "x", "baz": nil])
        #expect(HTTPStorageRules.matches(stored, requestHeaders: ["Foo": "1,2", "BAR": " x "]))
        #expect(HTTPStorageRules.matches(stored, requestHeaders: ["Foo": "1 ,  2", "Bar": "x", "Other": "y"]))
        #expect(!HTTPStorageRules.matches(stored, requestHeaders: ["Foo": "2, 1", "Bar": "x"]), "order matters")
        #expect(!HTTPStorageRules.matches(stored, requestHeaders: ["Foo": "1, 2"]), "Bar omitted")
        #expect(!HTTPStorageRules.matches(stored, requestHeaders: ["Foo": "1, 2", "Bar": "x", "Baz": ""]))
    }

    @Test func acceptLanguageIgnoresCaseOrderAndSpaces() throws {
        let stored = try #require(
            HTTPStorageRules.variant(vary: "Accept-Language", requestHeaders: ["Accept-Language": "en-US, fr;q=0.5"]))
        #expect(HTTPStorageRules.matches(stored, requestHeaders: ["accept-language": "FR; q=0.5,en-us"]))
        #expect(!HTTPStorageRules.matches(stored, requestHeaders: ["accept-language": "en-US"]))
    }

    @Test(arguments: ["*", "*, *", ", *", "*, Foo", "Foo, *", " * "])
    func varyStarMatchesNothing(vary: String) {
        #expect(HTTPStorageRules.variant(vary: vary, requestHeaders: ["Foo": "1"]) == nil)
    }

    @Test func withoutVaryEveryRequestMatches() throws {
        let stored = try #require(HTTPStorageRules.variant(vary: nil, requestHeaders: ["Foo": "1"]))
        #expect(stored.isEmpty)
        #expect(HTTPStorageRules.matches(stored, requestHeaders: [:]))
    }

    @Test func anUnsafeMethodsSuccessInvalidatesItsURLAndTheLocationsOfItsOrigin() throws {
        let target = try #require(URL(string: "https://api.example.com/v1/items?page=2"))
        func uris(_ method: String, _ status: Int = 200, _ headers: [String: String] = [:]) -> [String] {
            Invalidation.uris(method: method, statusCode: status, targetURI: target, responseHeaders: headers)
                .map(\.absoluteString)
        }
        #expect(uris("GET").isEmpty && uris("HEAD").isEmpty && uris("OPTIONS").isEmpty)
        #expect(uris("POST", 404).isEmpty && uris("DELETE", 500).isEmpty && uris("PUT", 101).isEmpty)
        #expect(uris("M-SEARCH", 302) == [target.absoluteString], "an unknown method is unsafe")
        let named = uris(
            "POST", 201,
            [
                "Location": "items/7", "Content-Location": "https://api.example.com:443/v1/all",
            ])
        #expect(
            named == [
                target.absoluteString, "https://api.example.com/v1/items/7", "https://api.example.com:443/v1/all",
            ])
        #expect(uris("PUT", 200, ["Location": "https://other.example.com/v1/items"]) == [target.absoluteString])
        #expect(uris("PUT", 200, ["Location": "http://api.example.com/v1/items"]) == [target.absoluteString])
        #expect(uris("PUT", 200, ["Location": "https://api.example.com:8443/v1/items"]) == [target.absoluteString])
    }
}
