import Errand
import Foundation
import Testing

/// `Redaction.url(_:)` and `Redaction.credentials`: a URL fit for a log line or a trace.
@Suite("Redaction: URLs for logs and traces")
struct RedactionTests {
    @Test func credentialsMaskTheUsualTokenNamesAndTheUserInformationOnly() throws {
        let url = try #require(
            URL(string: "https://ann:pa55@api.example.com/v1/items?page=2&access_token=t0k&api_key=k3y&sort=name#top"))
        let masked = Redaction.credentials.url(url)
        for secret in ["ann", "pa55", "t0k", "k3y"] { #expect(!masked.contains(secret), "\(masked)") }
        for kept in ["api.example.com/v1/items", "page=2", "sort=name", "access_token=", "api_key="] {
            #expect(masked.contains(kept), "\(masked)")
        }
    }

    @Test func theDefaultMasksNoQueryItemButAddedNamesAreMasked() throws {
        let url = try #require(URL(string: "https://api.example.com/feed?sid=abc&page=1"))
        #expect(Redaction.default.url(url).contains("sid=abc"))
        let masked = Redaction.credentials.adding(queryItems: ["sid"]).url(url)
        #expect(!masked.contains("abc") && masked.contains("page=1"))
    }
}
