import Foundation
import Testing

@testable import Errand

/// Both transports send a request's ``TransportRequest/cookieJar`` and store into it, on every hop.
struct TransportCookieTests {
    private func cookies(
        _ path: String, jar: CookieJar?, headers: [String: String] = [:], through transport: any Transport
    ) async throws -> [String: String]? {
        var request = try TransportRequest.loopback(path)
        request.cookieJar = jar
        request.headers = headers
        let probe = TransportProbe()
        _ = probe.send(request, through: transport)
        return await probe.completion().json["cookies"] as? [String: String]
    }

    @Test(arguments: TransportKind.allCases)
    func aRedirectHopsCookieIsStoredAndSentOnTheNextHop(_ kind: TransportKind) async throws {
        let jar = CookieJar()
        let transport = kind.make()
        // The 302 that sets the cookie leads to /cookies, which must already receive it.
        #expect(try await cookies("/cookies/set?oat=meal", jar: jar, through: transport) == ["oat": "meal"])
        #expect(jar.allCookies.map { "\($0.name)=\($0.value)" } == ["oat=meal"])
        #expect(try await cookies("/cookies", jar: jar, through: transport) == ["oat": "meal"])
    }

    @Test(arguments: TransportKind.allCases)
    func noJarMeansNoCookiesAndTheRequestsOwnCookieFieldWins(_ kind: TransportKind) async throws {
        let jar = CookieJar()
        let transport = kind.make()
        _ = try await cookies("/cookies/set?oat=meal", jar: jar, through: transport)
        #expect(try await cookies("/cookies", jar: nil, through: transport) == [:])
        #expect(
            try await cookies("/cookies", jar: jar, headers: ["cookie": "own=1"], through: transport) == ["own": "1"])
    }

    @Test(arguments: TransportKind.allCases)
    func eachOfSeveralSetCookieFieldsIsOneCookie(_ kind: TransportKind) async throws {
        let jar = CookieJar()
        let fields = ["a=1; Expires=Wed, 09 Jun 2100 10:18:14 GMT", "b=2, c; Path=/", "d=3"]
        let query = fields.map {
            "Set-Cookie=" + ($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0)
        }
        var request = try TransportRequest.loopback("/response-headers?" + query.joined(separator: "&"))
        request.cookieJar = jar
        let probe = TransportProbe()
        _ = probe.send(request, through: kind.make())
        #expect(await probe.completion().statusCode == 200)
        #expect(Set(jar.allCookies.map { "\($0.name)=\($0.value)" }) == ["a=1", "b=2, c", "d=3"])
    }

    @Test func fieldsURLSessionJoinedAreSplitAtEachNewCookie() {
        let joined = "a=1; Expires=Wed, 09 Jun 2100 10:18:14 GMT, b=2; Path=/,c=3, d"
        #expect(
            SetCookie.fields(joinedBySession: joined) == [
                "a=1; Expires=Wed, 09 Jun 2100 10:18:14 GMT", "b=2; Path=/", "c=3, d",
            ])
        #expect(SetCookie.fields(joinedBySession: "") == [""])
        #expect(SetCookie.fields(joinedBySession: ",=,") == [",=,"])
    }
}
