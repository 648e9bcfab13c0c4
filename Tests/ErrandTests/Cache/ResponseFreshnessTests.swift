import Foundation
import Testing

@testable import Errand

/// Freshness lifetime and age as RFC 9111 §4.2 computes them for a private cache.
@Suite("Response freshness: lifetime, heuristics and age (RFC 9111 §4.2)")
struct ResponseFreshnessTests {
    static let sent = Date(timeIntervalSince1970: 1_800_000_000)
    /// Two seconds after ``sent``.
    static let received = sent.addingTimeInterval(2)

    static func freshness(_ headers: [String: String], status: Int = 200) -> ResponseFreshness {
        ResponseFreshness(statusCode: status, headers: headers, requestTime: sent, responseTime: received)
    }

    static func date(_ offset: TimeInterval) -> String {
        HTTPDate.format(received.addingTimeInterval(offset))
    }

    @Test func maxAgeWinsOverExpiresAndSMaxageIsForSharedCaches() {
        let freshness = Self.freshness([
            "Cache-Control": "s-maxage=10, max-age=600", "Expires": Self.date(60), "Date": Self.date(0),
        ])
        #expect(freshness.lifetime == 600)
        #expect(!freshness.isHeuristic)
    }

    @Test func expiresCountsFromTheResponsesDateOrItsArrival() {
        #expect(Self.freshness(["Expires": Self.date(60), "Date": Self.date(-30)]).lifetime == 90)
        #expect(Self.freshness(["Expires": Self.date(60)]).lifetime == 60)
        #expect(Self.freshness(["Expires": Self.date(60), "Date": "yesterday"]).lifetime == 60)
        #expect(Self.freshness(["Expires": Self.date(-60), "Date": Self.date(0)]).lifetime == 0)
    }

    @Test(arguments: ["0", "-1", "soon", "Thu, 18 Aug 2050 02:01:18 UTC"])
    func anExpiresThatCannotBeReadIsThePast(expires: String) {
        let freshness = Self.freshness(["Expires": expires, "Last-Modified": Self.date(-100_000)])
        #expect(freshness.lifetime == 0)
        #expect(!freshness.isHeuristic, "an explicit, if unreadable, expiry leaves no room for a heuristic")
    }

    @Test func anInvalidMaxAgeIsStaleEvenWithAFutureExpires() {
        #expect(Self.freshness(["Cache-Control": "max-age=60s", "Expires": Self.date(600)]).lifetime == 0)
    }

    @Test func theHeuristicIsATenthOfTheTimeSinceLastModified() {
        let headers = ["Date": Self.date(0), "Last-Modified": Self.date(-10_000)]
        let freshness = Self.freshness(headers)
        #expect(freshness.lifetime == 1000)
        #expect(freshness.isHeuristic)
        #expect(Self.freshness(headers, status: 404).lifetime == 1000)
        #expect(Self.freshness(headers, status: 302).lifetime == 0, "302 is not heuristically cacheable")
        #expect(Self.freshness(headers, status: 201).lifetime == 0)
        #expect(Self.freshness(headers.merging(["Cache-Control": "public"]) { $1 }, status: 302).lifetime == 1000)
        #expect(Self.freshness(["Last-Modified": Self.date(-10_000)]).lifetime == 1000, "Date is the arrival")
        #expect(Self.freshness(["Date": Self.date(0)]).lifetime == 0, "nothing to guess from")
        #expect(Self.freshness(["Date": Self.date(0), "Last-Modified": Self.date(60)]).lifetime == 0)
    }

    @Test func theInitialAgeIsTheLargerOfDateAndAgeWithTheRoundTrip() {
        // Generated 100 s before it arrived; the Age field says less.
        #expect(Self.freshness(["Date": Self.date(-100), "Age": "10"]).initialAge == 100)
        // Age plus the two seconds the request took says more.
        #expect(Self.freshness(["Date": Self.date(-100), "Age": "300"]).initialAge == 302)
        // A Date ahead of the client's clock makes no negative age.
        #expect(Self.freshness(["Date": Self.date(500)]).initialAge == 2)
        #expect(Self.freshness(["Date": Self.date(0), "Age": "abc"]).initialAge == 2)
    }

    @Test func ageGrowsWithTimeInTheCache() {
        let freshness = Self.freshness(["Cache-Control": "max-age=100", "Date": Self.date(-10)])
        #expect(freshness.age(at: Self.received) == 10)
        #expect(freshness.age(at: Self.received.addingTimeInterval(50)) == 60)
        #expect(freshness.isFresh(at: Self.received.addingTimeInterval(89)))
        #expect(!freshness.isFresh(at: Self.received.addingTimeInterval(90)))
        #expect(freshness.staleness(at: Self.received.addingTimeInterval(120)) == 30)
        #expect(freshness.staleness(at: Self.received) == 0)
        // A clock that went back does not make the response younger than it arrived.
        #expect(freshness.age(at: Self.received.addingTimeInterval(-1000)) == 10)
    }

    @Test func anAgeOver2To31MakesAnyLifetimeStale() {
        let freshness = Self.freshness(["Cache-Control": "max-age=3600", "Age": "2147483648"])
        #expect(!freshness.isFresh(at: Self.received))
    }
}
