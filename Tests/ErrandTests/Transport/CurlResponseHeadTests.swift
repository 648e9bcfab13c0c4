import Foundation
import Testing

@testable import Errand

@Suite("libcurl response head")
struct CurlResponseHeadTests {
    /// The head `lines` make, each given to it as libcurl does, CRLF included.
    private func head(_ lines: [String]) -> CurlResponseHead {
        var head = CurlResponseHead()
        for line in lines + [""] {
            let bytes = Array((line + "\r\n").utf8)
            _ = bytes.withUnsafeBytes { head.take($0) }
        }
        return head
    }

    @Test(arguments: [3, 100])
    func repeatedFieldsJoinUnderTheFirstSpellingWhateverTheirCase(filler: Int) {
        let fillers = (0..<filler).map { "X-Filler-\($0): \($0)" }
        let parsed = head(["HTTP/1.1 200 OK", "Vary: Accept"] + fillers + ["vary: Origin", "VARY: Cookie"])
        #expect(parsed.statusCode == 200)
        #expect(parsed.headers["Vary"] == "Accept, Origin, Cookie")
        #expect(parsed.headers["vary"] == nil && parsed.headers["VARY"] == nil)
        #expect(parsed.headers.count == filler + 1)
        #expect(parsed.values(of: "vary") == ["Accept", "Origin", "Cookie"])
    }

    /// Field names that are no HTTP token but equal as Swift strings (canonically equivalent) are
    /// one key of `headers`: the second value replaced the first. Found by the response-head fuzz target.
    @Test(arguments: [3, 100])
    func fieldNamesEqualOnlyAsUnicodeKeepEveryValue(filler: Int) {
        let fillers = (0..<filler).map { "X-Filler-\($0): \($0)" }
        let parsed = head(["HTTP/1.1 200 OK", "\u{E9}: 1"] + fillers + ["e\u{301}: 2", "\u{212A}ey: 3", "Key: 4"])
        #expect(parsed.headers["\u{E9}"] == "1, 2")
        #expect(parsed.headers["Key"] == "3, 4")
        #expect(parsed.headers.count == filler + 2)
    }
}
