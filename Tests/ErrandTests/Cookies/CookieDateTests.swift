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
        CookieDate.parse(Substring(text)).map(HTTPDate.format)
    }

    @Test(arguments: ["examples.json", "bsd-examples.json"])
    func everyExampleOfTheWorkingGroupReadsAsExpected(_ file: String) throws {
        let examples = try Self.examples(file)
        #expect(examples.count >= 15)
        for example in examples {
            #expect(parsed(example.test) == example.expected, "\(example.test)")
        }
    }

    @Test func fieldsAreTakenInAnyOrderFromTheFirstTokenThatFits() {
        #expect(parsed("2021 Jun 09 10:18:14") == "Wed, 09 Jun 2021 10:18:14 GMT")
        #expect(parsed("09-jun-2021 10:18:14 +0200 trailing words") == "Wed, 09 Jun 2021 10:18:14 GMT")
        #expect(parsed("Junebug 9 2021 1:2:3") == "Wed, 09 Jun 2021 01:02:03 GMT")
        #expect(parsed("10:18:14, 9 Jun 21") == "Wed, 09 Jun 2021 10:18:14 GMT")
    }

    @Test func twoDigitYearsAreThisCenturyBelow70() {
        #expect(parsed("1 Jan 69 00:00:00") == "Tue, 01 Jan 2069 00:00:00 GMT")
        #expect(parsed("1 Jan 70 00:00:00") == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(parsed("1 Jan 0 00:00:00") == nil, "a year needs two digits")
    }

    @Test func impossibleDatesFail() {
        #expect(parsed("29 Feb 1900 00:00:00") == nil)
        #expect(parsed("29 Feb 2000 00:00:00") == "Tue, 29 Feb 2000 00:00:00 GMT")
        #expect(parsed("31 Apr 2021 00:00:00") == nil)
        #expect(parsed("1 Jan 1600 00:00:00") == nil)
        #expect(parsed("1 Jan 1601 00:00:00") == "Mon, 01 Jan 1601 00:00:00 GMT")
        #expect(parsed("1 Jan 2021 24:00:00") == nil)
        #expect(parsed("1 Jan 2021 23:60:00") == nil)
        #expect(parsed("1 Jan 2021") == nil, "no time")
        #expect(parsed("") == nil)
    }

    @Test func longRunsOfDigitsAndOddBytesNeitherCrashNorMatch() {
        let digits = String(repeating: "9", count: 100)
        #expect(parsed("\(digits) Jan \(digits) \(digits):1:1") == nil)
        #expect(parsed("1 Jan 2021 123:00:00") == nil)
        #expect(
            parsed("1\u{0} Jan 2021 00:00:00") == "Fri, 01 Jan 2021 00:00:00 GMT",
            "NUL is a non-delimiter after the day")
        #expect(parsed("é 1 Jan 2021 00:00:00 ü") == "Fri, 01 Jan 2021 00:00:00 GMT")
    }
}
