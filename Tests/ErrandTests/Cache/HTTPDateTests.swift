import Foundation
import Testing

@testable import Errand

/// HTTP-dates (RFC 9110 §5.6.7): the three forms read, anything else refused, as a cache must
/// treat an `Expires` it cannot read (cache-tests.fyi, `expires-parse`).
@Suite("HTTP dates: the three forms, and nothing else")
struct HTTPDateTests {
    /// 1994-11-06 08:49:37 UTC, the RFC's example.
    static let example = Date(timeIntervalSince1970: 784_111_777)
    static let now = Date(timeIntervalSince1970: 1_795_000_000)  // 2026-11-18

    @Test(arguments: [
        "Sun, 06 Nov 1994 08:49:37 GMT",  // IMF-fixdate
        "Sunday, 06-Nov-94 08:49:37 GMT",  // obsolete RFC 850
        "Sun Nov  6 08:49:37 1994",  // ANSI C asctime()
        "SUN, 06 NOV 1994 08:49:37 gmt",  // names in any case, as every browser reads them
    ])
    func everyFormReadsAsTheSameInstant(text: String) {
        #expect(HTTPDate.parse(text, now: Self.now) == Self.example)
    }

    @Test(arguments: [
        ("Thu, 18 Aug 2050 02:01:18 UTC", "another zone than GMT"),
        ("Thu, 18 Aug 2050 02:01:18 AEST", "another zone than GMT"),
        ("Thu, 18 Aug 50 02:01:18 GMT", "a two-digit year in IMF-fixdate"),
        ("Thu 18 Aug 2050 02:01:18 GMT", "no comma"),
        ("Thu, 18  Aug  2050 02:01:18 GMT", "two spaces"),
        ("Thu, 18-Aug-2050 02:01:18 GMT", "dashes in IMF-fixdate"),
        ("Thu, 18 Aug 2050 02.01.18 GMT", "periods in the time"),
        ("Thu, 18 Aug 2050 2:01:18 GMT", "a one-digit hour"),
        ("Thu, 18 Aug 2050 2:01:18 GMT, Thu, 18 Aug 2050 2:01:19 GMT", "two field lines"),
        ("0", "the zero a cache must read as the past"),
        ("", "nothing"),
        ("Thu, 31 Feb 2050 02:01:18 GMT", "a day February does not have"),
        ("Thu, 18 Aug 2050 24:00:00 GMT", "hour 24"),
        ("Thu, 18 Aug 2050 02:60:00 GMT", "minute 60"),
        ("Thursday, 18 Aug 2050 02:01:18 GMT", "a long day name in IMF-fixdate"),
        ("Thu, 18 Aug 2050 02:01:18 GMT ", "a space after"),
        (" Thu, 18 Aug 2050 02:01:18 GMT", "a space before"),
        ("Thu, 18 Augu 2050 02:01:18 GMT", "a longer month name"),
        ("Thu, ١٨ Aug 2050 02:01:18 GMT", "digits that are not ASCII"),
    ])
    func anythingElseIsNoDate(text: String, why: String) {
        #expect(HTTPDate.parse(text, now: Self.now) == nil, "\(why)")
    }

    @Test func aTwoDigitYearIsAtMostFiftyYearsAhead() throws {
        let year2050 = try #require(HTTPDate.parse("Thursday, 18-Aug-50 02:01:18 GMT", now: Self.now))
        #expect(HTTPDate.format(year2050) == "Thu, 18 Aug 2050 02:01:18 GMT")
        let year1977 = try #require(HTTPDate.parse("Thursday, 18-Aug-77 02:01:18 GMT", now: Self.now))
        #expect(HTTPDate.format(year1977) == "Thu, 18 Aug 1977 02:01:18 GMT")
    }

    @Test func datesBeyond32BitsAndLeapDaysRead() {
        #expect(HTTPDate.parse("Tue, 19 Jan 2038 14:14:08 GMT")?.timeIntervalSince1970 == 2_147_523_248)
        #expect(HTTPDate.parse("Sun, 21 Nov 2286 04:46:39 GMT")?.timeIntervalSince1970 == 10_000_039_599)
        #expect(HTTPDate.parse("Tue, 29 Feb 2000 00:00:00 GMT")?.timeIntervalSince1970 == 951_782_400)
        #expect(HTTPDate.parse("Thu, 29 Feb 2100 00:00:00 GMT") == nil)
        #expect(HTTPDate.parse("Thu, 01 Jan 1970 00:00:00 GMT")?.timeIntervalSince1970 == 0)
    }

    @Test func formattingWritesIMFFixdateAndReadsBack() {
        #expect(HTTPDate.format(Self.example) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: -1)) == "Wed, 31 Dec 1969 23:59:59 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 0.9)) == "Thu, 01 Jan 1970 00:00:00 GMT")
        for seconds in stride(from: -5_000_000_000, through: 10_000_000_000, by: 123_456_789) {
            let date = Date(timeIntervalSince1970: TimeInterval(seconds))
            #expect(HTTPDate.parse(HTTPDate.format(date)) == date, "\(seconds)")
        }
    }

    @Test func aRetryAfterDateIsReadTheSameWay() {
        let now = Self.example
        #expect(RetryPolicy.seconds(inRetryAfter: "Sun, 06 Nov 1994 08:50:37 GMT", now: now) == 60)
        #expect(RetryPolicy.seconds(inRetryAfter: "Sun Nov  6 08:50:37 1994", now: now) == 60)
        #expect(RetryPolicy.seconds(inRetryAfter: "Sun, 06 Nov 1994 08:50:37 UTC", now: now) == nil)
    }
}
