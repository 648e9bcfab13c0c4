import Foundation
import Testing

@testable import Errand

/// What the redaction fuzz target (Fuzz/ErrandFuzz/RedactionTarget.swift) found, kept as tests.
@Suite("HAR entries mask secrets quoted back")
struct HAREntryBuilderTests {
    private func entryText(request: TransportRequest, response: Response?, error: ErrandError? = nil) -> String {
        let json = HAREntryBuilder.entryJSON(
            redaction: .default, maximumBodySize: 1 << 20, request: request, response: response, error: error)
        return String(decoding: json, as: UTF8.self)
    }

    /// `URL.password` is percent-encoded on Linux, so only `p%40ss%20word` was looked for: a
    /// server or an error quoting the password as typed put it in the file.
    @Test func aURLPasswordQuotedDecodedIsMasked() throws {
        let url = try #require(URL(string: "https://ann:p%40ss%20word@api.example.com/login"))
        let request = TransportRequest(url: url)
        let echo = Response(
            statusCode: 200, headers: ["Content-Type": "text/plain", "X-Echo": "p@ss word"],
            data: Data("you sent p@ss word".utf8))
        let answered = entryText(request: request, response: echo)
        #expect(!answered.contains("p@ss word"))
        #expect(!answered.contains("p%40ss%20word"))
        let failed = entryText(request: request, response: nil, error: .decoding("the server said p@ss word"))
        #expect(!failed.contains("p@ss word"))
    }

    /// Found by fuzzing: U+07AA, a combining mark, makes one Character with the space or `=`
    /// before it, so splitting by Character found no token after `Bearer ` and no cookie value.
    @Test func valuesStartingWithACombiningMarkAreScrubbedWhereverTheyReappear() throws {
        let token = "\u{07AA}tok3n"
        let cookie = "\u{07AA}s3ssion"
        let request = TransportRequest(
            url: try #require(URL(string: "https://api.example.com/me")),
            headers: ["X-Api-Key": "Bearer " + token, "Cookie": "theme=dark; sid=" + cookie])
        let redaction = Redaction(headers: ["X-Api-Key", "Cookie"], queryItems: [], jsonFields: [])
        let failed = String(
            decoding: HAREntryBuilder.entryJSON(
                redaction: redaction, maximumBodySize: 1000, request: request, response: nil,
                error: .decoding("the server said \(token) and \(cookie)")), as: UTF8.self)
        #expect(!failed.contains(token))
        #expect(!failed.contains(cookie))
        #expect(!failed.contains("s3ssion") && !failed.contains("tok3n"))
    }

    @Test func aSetCookieValueStartingWithACombiningMarkStaysInItsValue() {
        let cookies = HTTPArchive.Cookie.cookies(ofSetCookieField: "sid=\u{07AA}abc=def; Path=/", masked: true)
        #expect(cookies.map(\.name) == ["sid"])
        #expect(cookies.first?.value == Redaction.placeholder)
        #expect(cookies.first?.path == "/")
    }
}
