import Foundation
import Testing

@testable import Errand

/// The jar against a hostile server and a hostile file: what a response or the disk may hold
/// and what the jar then costs, keeps and sends.
struct CookieReviewTests {
    @Test func joinedFieldsAreSplitInLinearTime() {
        // URLSession joins the fields; a server controls how many commas follow a cookie.
        let joined = "a=b" + String(repeating: ",", count: 40_000)
        let clock = ContinuousClock()
        let elapsed = clock.measure { _ = SetCookie.fields(joinedBySession: joined) }
        #expect(elapsed < .seconds(1), "took \(elapsed)")
        let split = SetCookie.fields(joinedBySession: "a=b" + String(repeating: ", x", count: 1000) + ", c=d")
        #expect(split.count == 2)
    }

    @Test func oneResponseCannotEvictAnotherSitesSecureCookie() throws {
        let jar = CookieJar()
        let api = try #require(URL(string: "https://api.example.com/"))
        jar.storeCookies(fromSetCookieFields: ["session=secret; Secure; Max-Age=3600"], for: api)
        // One host twenty labels deep may name each domain above it, each a domain of its own.
        let labels = (0..<20).map { "l\($0)" }
        let host = labels.joined(separator: ".") + ".evil.org"
        var fields: [String] = []
        for level in 0...labels.count {
            let domain = (labels[level...] + ["evil", "org"]).joined(separator: ".")
            for index in 0..<CookieStore.domainLimit { fields.append("c\(level)x\(index)=1; Domain=\(domain)") }
        }
        jar.storeCookies(fromSetCookieFields: fields, for: try #require(URL(string: "https://\(host)/")))
        #expect(jar.cookieHeader(for: api) == "session=secret")
        #expect(jar.cookies(for: try #require(URL(string: "https://\(host)/"))).count <= CookieStore.domainLimit)
    }

    @Test func aCookieFromTheFileWithALineBreakIsNotSent() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("errand-jar-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("cookies.json")
        let later = Date().addingTimeInterval(600)
        let cookies = [
            Cookie(name: "a", value: "1\r\nX-Injected: 1", domain: "api.example.com", expiresAt: later),
            Cookie(name: "b", value: "2", domain: "API.Example.com", expiresAt: later),
            Cookie(name: "c", value: "3", domain: "api.example.com", expiresAt: later),
        ]
        struct File: Encodable {
            var version = 1
            var cookies: [Cookie]
        }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try JSONEncoder().encode(File(cookies: cookies)).write(to: file)
        let jar = try CookieJar(fileURL: file)
        #expect(jar.cookieHeader(for: try #require(URL(string: "https://api.example.com/"))) == "b=2; c=3")
    }

    @Test func manyPlainFieldsBesideASecureCookieCostLittle() throws {
        let jar = CookieJar()
        jar.storeCookies(fromSetCookieFields: ["s=1; Secure"], for: try #require(URL(string: "https://a.example.org/")))
        for host in 0..<18 {
            jar.storeCookies(
                fromSetCookieFields: (0..<170).map { "n\($0)=1" },
                for: try #require(URL(string: "http://h\(host).example.org/")))
        }
        let clock = ContinuousClock()
        let elapsed = try clock.measure {
            jar.storeCookies(
                fromSetCookieFields: Array(repeating: "s=forged", count: 20_000),
                for: try #require(URL(string: "http://b.example.org/")))
        }
        #expect(elapsed < .seconds(1), "took \(elapsed)")
    }

    @Test func cookiesSetTogetherGoOutInTheSameOrderAfterARestart() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("errand-jar-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("cookies.json")
        let origin = try #require(URL(string: "https://a.example.com/"))
        let jar = try CookieJar(fileURL: file)
        // One response: both have the same creation time, so arrival decides (§5.8.3).
        jar.storeCookies(fromSetCookieFields: ["y=2; Domain=example.com; Max-Age=60", "x=1; Max-Age=60"], for: origin)
        #expect(jar.cookieHeader(for: origin) == "y=2; x=1")
        #expect(try CookieJar(fileURL: file).cookieHeader(for: origin) == "y=2; x=1")
    }
}
