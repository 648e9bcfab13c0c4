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
}
