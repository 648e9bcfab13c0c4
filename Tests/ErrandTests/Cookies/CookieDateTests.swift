import Foundation
import Testing

@testable import Errand

/// RFC 6265bis §5.1.1's date algorithm against the http-state group's date examples, and its edges.
struct CookieDateTests {
    struct Example: Decodable {
        let test: String
        let expected: String?
    }

    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/HTTPState/dates")

    /// A file's examples; `bsd-examples.json` opens with a licence in `//` comments.
    static func examples(_ name: String) throws -> [Example] {
        let text = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
        let json = text.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix("//") }
            .joined(separator: "\n")
        return try JSONDecoder().decode([Example].self, from: Data(json.utf8))
    }

    private func parsed(_ text: String) -> String? {
        CookieDate.parse(Substring(text)).map(CookieDate.httpDate)
    }

    @Test(arguments: [("examples.json", 15), ("bsd-examples.json", 55)])
    func everyExampleOfTheWorkingGroupReadsAsExpected(_ file: String, count: Int) throws {
        let examples = try Self.examples(file)
        #expect(examples.count == count)
        #expect(examples.contains { $0.expected == nil }, "the files hold dates that must not be read")
        let failures = examples.filter { parsed($0.test) != $0.expected }
        #expect(failures.isEmpty, "\(failures.map { "\($0.test): \(parsed($0.test) ?? "nil")" })")
    }

    @Test func fieldsAreTakenInAnyOrderFromTheFirstTokenThatFits() {
        #expect(parsed("2021 Jun 09 10:18:14") == "Wed, 09 Jun 2021 10:18:14 GMT")
        #expect(parsed("09-jun-2021 10:18:14 +0200 trailing words") == "Wed, 09 Jun 2021 10:18:14 GMT")
        #expect(parsed("Junebug 9 2021 1:2:3") == "Wed, 09 Jun 2021 01:02:03 GMT")
        #expect(parsed("10:18:14, 9 Jun 21") == "Wed, 09 Jun 2021 10:18:14 GMT")
        // A second time no longer fits the time, but its hour fits the day-of-month.
        #expect(parsed("00:00:00 7:8:9 Jan 2021") == "Thu, 07 Jan 2021 00:00:00 GMT")
        // A token fitting nothing still missing is skipped: the second month and the third number.
        #expect(parsed("Mar 5 Apr 1999 12 00:00:01") == "Fri, 05 Mar 1999 00:00:01 GMT")
        #expect(parsed("DECEMBER 25 2021 23:59:59") == "Sat, 25 Dec 2021 23:59:59 GMT")
        #expect(parsed("jAn 1 2021 0:0:0") == "Fri, 01 Jan 2021 00:00:00 GMT")
    }

    @Test func delimitersSplitTokensAndAnythingElseGluesThem() {
        // Every delimiter class: tab, %x20-2F, %x3B-40, %x5B-60, %x7B-7E.
        #expect(parsed("\t1;Jan=2021@00:00:00") == "Fri, 01 Jan 2021 00:00:00 GMT")
        #expect(parsed("[1]Jan`2021^00:00:00{~}") == "Fri, 01 Jan 2021 00:00:00 GMT")
        #expect(parsed("(1)/Jan\\2021|00:00:00") == "Fri, 01 Jan 2021 00:00:00 GMT")
        // A letter after the digits is a non-digit: "1Jan" is a day and leaves no month.
        #expect(parsed("1Jan 2021 00:00:00") == nil)
        #expect(parsed("1st Jan 2021 00:00:00") == "Fri, 01 Jan 2021 00:00:00 GMT")
        // ":" is no delimiter, so a time glued to a date is one token that is a day, not a time.
        #expect(parsed("1 Jan 2021:00:00:00") == nil)
        #expect(parsed("12:34:56GMT 1 Jan 2021") == "Fri, 01 Jan 2021 12:34:56 GMT")
        #expect(parsed("12:34:567 1 Jan 2021") == nil, "a third digit is no time-field")
        #expect(parsed("Jan\u{7F} 1 2021 00:00:00") == "Fri, 01 Jan 2021 00:00:00 GMT", "DEL is a non-delimiter")
    }

    @Test func twoDigitYearsAreThisCenturyBelow70() {
        #expect(parsed("1 Jan 69 00:00:00") == "Tue, 01 Jan 2069 00:00:00 GMT")
        #expect(parsed("1 Jan 70 00:00:00") == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(parsed("1 Jan 99 00:00:00") == "Fri, 01 Jan 1999 00:00:00 GMT")
        #expect(parsed("1 Jan 00 00:00:00") == "Sat, 01 Jan 2000 00:00:00 GMT")
        #expect(parsed("1 Jan 0 00:00:00") == nil, "a year needs two digits")
        // Step 3 looks at the value, not at how many digits wrote it.
        #expect(parsed("1 Jan 0070 00:00:00") == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(parsed("1 Jan 100 00:00:00") == nil, "year 100 is before 1601")
    }

    @Test func leapYearsFollowTheGregorianRules() {
        #expect(parsed("29 Feb 2000 00:00:00") == "Tue, 29 Feb 2000 00:00:00 GMT")
        #expect(parsed("29 Feb 2024 12:00:00") == "Thu, 29 Feb 2024 12:00:00 GMT")
        #expect(parsed("29 Feb 1604 00:00:00") == "Sun, 29 Feb 1604 00:00:00 GMT")
        #expect(parsed("29 Feb 1900 00:00:00") == nil)
        #expect(parsed("29 Feb 2100 00:00:00") == nil)
        #expect(parsed("29 Feb 2023 00:00:00") == nil)
        #expect(parsed("29 Feb 24 00:00:00") == "Thu, 29 Feb 2024 00:00:00 GMT", "after the century is added")
    }

    @Test func datesOutsideTheRangesFail() {
        #expect(parsed("31 Apr 2021 00:00:00") == nil)
        #expect(parsed("31 Jun 2021 00:00:00") == nil)
        #expect(parsed("30 Feb 2020 00:00:00") == nil)
        #expect(parsed("31 Dec 2021 00:00:00") == "Fri, 31 Dec 2021 00:00:00 GMT")
        #expect(parsed("0 Jan 2021 00:00:00") == nil)
        #expect(parsed("32 Jan 2021 00:00:00") == nil)
        #expect(parsed("1 Jan 1600 23:59:59") == nil)
        #expect(parsed("1 Jan 1601 00:00:00") == "Mon, 01 Jan 1601 00:00:00 GMT")
        #expect(parsed("31 Dec 9999 23:59:59") == "Fri, 31 Dec 9999 23:59:59 GMT")
        #expect(parsed("1 Jan 2021 24:00:00") == nil)
        #expect(parsed("1 Jan 2021 23:60:00") == nil)
        #expect(parsed("1 Jan 2021 23:59:60") == nil, "no leap seconds")
        #expect(parsed("1 Jan 2021 23:59:59") == "Fri, 01 Jan 2021 23:59:59 GMT")
    }

    @Test func aMissingFieldFails() {
        #expect(parsed("1 Jan 2021") == nil, "no time")
        #expect(parsed("Jan 2021 00:00:00") == nil, "no day")
        #expect(parsed("1 2021 00:00:00") == nil, "no month")
        #expect(parsed("1 Jan 00:00:00") == nil, "no year")
        #expect(parsed("") == nil)
        #expect(parsed(" ,;-/ ") == nil)
    }

    @Test func longRunsOfDigitsAndOddBytesNeitherCrashNorMatch() {
        let digits = String(repeating: "9", count: 100)
        #expect(parsed("\(digits) Jan \(digits) \(digits):1:1") == nil)
        #expect(parsed("1 Jan 2021 00:00:\(digits)") == nil)
        #expect(parsed("\(digits) 1 Jan 2021 00:00:00") == "Fri, 01 Jan 2021 00:00:00 GMT", "too long to be anything")
        #expect(parsed("1 Jan 2021 00:00:00 \(String(repeating: "1:", count: 10_000))") != nil)
        #expect(parsed("1 Jan 2021 123:00:00") == nil)
        #expect(
            parsed("1\u{0} Jan 2021 00:00:00") == "Fri, 01 Jan 2021 00:00:00 GMT",
            "NUL is a non-delimiter after the day")
        #expect(parsed("é 1 Jan 2021 00:00:00 ü") == "Fri, 01 Jan 2021 00:00:00 GMT")
        #expect(parsed("1 Ja\u{301}n 2021 00:00:00") == nil, "a combining mark splits no month")
        #expect(parsed("１ Jan 2021 00:00:00") == nil, "only ASCII digits are digits")
    }

    @Test func aSliceOfALargerStringReadsOnlyItsOwnBytes() {
        let field = "Expires=1 Jan 2021 00:00:00; Path=/; Max-Age=1 Feb 2022 10:10:10"
        guard let start = field.firstIndex(of: "="), let end = field.firstIndex(of: ";") else {
            Issue.record("no attribute")
            return
        }
        let value = field[field.index(after: start)..<end]
        #expect(CookieDate.parse(value).map(CookieDate.httpDate) == "Fri, 01 Jan 2021 00:00:00 GMT")
        #expect(CookieDate.parse(field[..<field.index(start, offsetBy: 14)]) == nil, "the time lies past the cut")
    }

    @Test func everyWrittenDateReadsBackTheSame() {
        // A day's worth of seconds apart from 1601 to 9999, plus the first and last second.
        let first = -11_644_473_600
        let last = 253_402_300_799
        var dates = stride(from: first, through: last, by: 86_400 * 97 + 3_601).map(Double.init)
        dates += [Double(first), Double(last)]
        let differing = dates.map { Date(timeIntervalSince1970: $0) }.filter { date in
            CookieDate.parse(Substring(CookieDate.httpDate(date))) != date
        }
        #expect(dates.count > 30_000)
        #expect(differing.isEmpty, "\(differing.prefix(5).map(CookieDate.httpDate))")
    }
}
