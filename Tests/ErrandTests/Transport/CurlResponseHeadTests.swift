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

    /// What each line of `lines` completed, given one by one.
    private func outcomes(_ lines: [String]) -> [CurlResponseHead.Outcome] {
        var head = CurlResponseHead()
        return lines.map { line in Array((line + "\r\n").utf8).withUnsafeBytes { head.take($0) } }
    }

    @Test(arguments: ["HTTP/1.1 200 OK", "HTTP/1.1 200", "HTTP/1.0 200 ", "HTTP/2 200 ", "HTTP/1.1 999 Odd"])
    func aStatusLineAsRFC9112HasItIsTaken(_ line: String) {
        #expect(outcomes([line, ""]) == [.incomplete, .complete])
    }

    @Test(arguments: [
        "Http/1.1 200 OK", "HTTP/1.1 20 OK", "HTTP/1.1 2000 OK", "HTTP/1.1 099 Low", "HTTP/x.1 200 OK",
        "HTTP/1.1  200 OK", "HTTP/1.1 200OK", "FOOBAR", "Content-Type: text/plain", "",
    ])
    func aFirstLineThatIsNoStatusLineIsNotHTTP(_ line: String) {
        guard case .notHTTP(let shown) = outcomes([line]).first else {
            Issue.record("\(line) was taken as a status line")
            return
        }
        #expect(shown == line)
    }

    @Test func theLineAfterAnInterimHeadMustBeAStatusLineToo() {
        #expect(
            outcomes(["HTTP/1.1 103 Early Hints", "Link: </a.css>", "", "HTTP/1.1 200 OK", ""])
                == [.incomplete, .incomplete, .interim, .incomplete, .complete])
        #expect(outcomes(["HTTP/1.1 100 Continue", "", "X-Stray: 1"]).last == .notHTTP("X-Stray: 1"))
    }

    @Test func aShownLineIsCutAndKeepsOnlyPrintableASCII() {
        guard case .notHTTP(let shown) = outcomes(["\u{1B}[31m" + String(repeating: "x", count: 100)]).first else {
            Issue.record("taken")
            return
        }
        #expect(shown.utf8.count == 64)
        #expect(shown.hasPrefix("?[31m"))
    }

    @Test func trailersAreKeptApartFromTheHeadAndJoinedAsItIs() {
        var parsed = head(["HTTP/1.1 200 OK", "X-Checksum: head"])
        for line in ["X-Checksum: abc", "x-checksum: def", "X-Other:  v ", ""] {
            #expect(Array((line + "\r\n").utf8).withUnsafeBytes { parsed.takeTrailer($0) })
        }
        #expect(parsed.headers["X-Checksum"] == "head")
        #expect(parsed.trailers == ["X-Checksum": "abc, def", "X-Other": "v"])
    }

    @Test func trailersPastTheLimitAreRefused() {
        var parsed = head(["HTTP/1.1 200 OK"])
        let line = Array(("X-Filler: " + String(repeating: "f", count: 1000) + "\r\n").utf8)
        var taken = 0
        while line.withUnsafeBytes({ parsed.takeTrailer($0) }) { taken += 1 }
        #expect(taken == CurlResponseHead.trailerLimit / line.count)
    }
}
