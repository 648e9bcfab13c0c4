import Foundation
import Testing

@testable import Errand

/// The jar against a hostile server and a hostile file: what a response or the disk may hold
/// and what the jar then costs, keeps and sends.
struct CookieJarHostileTests {
    @Test func joinedFieldsWithManyCommasStayOneField() {
        // URLSession joins the fields; a server controls how many commas follow a cookie. A split
        // that looked ahead for `=` from every comma took minutes over this one.
        let joined = "a=b" + String(repeating: ",", count: 40_000)
        #expect(SetCookie.fields(joinedBySession: joined) == [joined])
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

    @Test func manyPlainFieldsNeverShadowASecureCookie() throws {
        let jar = CookieJar()
        let secureOrigin = try #require(URL(string: "https://a.example.org/"))
        jar.storeCookies(fromSetCookieFields: ["s=1; Secure; Domain=example.org"], for: secureOrigin)
        for host in 0..<18 {
            jar.storeCookies(
                fromSetCookieFields: (0..<150).map { "n\($0)=1" },
                for: try #require(URL(string: "http://h\(host).example.org/")))
        }
        // Each of these once searched the whole jar under its lock.
        let plain = try #require(URL(string: "http://b.example.org/"))
        jar.storeCookies(fromSetCookieFields: Array(repeating: "s=forged", count: 20_000), for: plain)
        #expect(jar.cookieHeader(for: secureOrigin) == "s=1")
        #expect(jar.cookieHeader(for: plain) == nil)
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

    @Test func aPrefixFollowedByACombiningMarkIsStillAPrefix() throws {
        let jar = CookieJar()
        // Compared as characters, `-` and U+0301 are one, and `__Secure-` seemed absent.
        jar.storeCookies(
            fromSetCookieFields: ["__Secure-\u{301}x=1", "__host-\u{301}y=2; Secure; Domain=example.org"],
            for: try #require(URL(string: "http://example.org/")))
        jar.storeCookies(
            fromSetCookieFields: ["__Host-\u{301}z=3; Secure; Domain=example.org; Path=/"],
            for: try #require(URL(string: "https://example.org/")))
        #expect(jar.allCookies.isEmpty)
    }

    @Test func namesThatDifferOnlyInNormalizationAreTwoCookies() throws {
        let jar = CookieJar()
        let origin = try #require(URL(string: "https://example.org/"))
        jar.storeCookies(fromSetCookieFields: ["\u{E9}=1", "e\u{301}=2"], for: origin)
        #expect(jar.cookieHeader(for: origin) == "\u{E9}=1; e\u{301}=2")
    }

    @Test func theDefaultPathEndsAtTheLastSlashByte() {
        #expect(SetCookie.defaultPath(of: "/a/\u{301}b").utf8.elementsEqual("/a".utf8))
    }

    @Test func aSiteOverItsLimitLosesItsOwnOldestCookiesFirst() throws {
        try #require(PublicSuffixList.system.isComplete, "the site needs the full list")
        let jar = CookieJar()
        let first = try #require(URL(string: "https://a.example.org/"))
        jar.storeCookies(fromSetCookieFields: ["keep=1; Secure"], for: first)
        jar.storeCookies(fromSetCookieFields: (0..<100).map { "old\($0)=1" }, for: first)
        // A second host of the same site brings the site over its limit.
        let second = try #require(URL(string: "https://b.example.org/"))
        jar.storeCookies(fromSetCookieFields: (0..<100).map { "new\($0)=1" }, for: second)
        // The 181st cookie of the site brings it down to 150, then the last 20 arrive.
        let kept = jar.allCookies
        #expect(kept.count == CookieStore.domainLimit - CookieStore.domainPurge + 20)
        #expect(kept.filter { $0.name.hasPrefix("old") }.map(\.name).sorted() == (31..<100).map { "old\($0)" }.sorted())
        #expect(kept.contains { $0.name == "keep" })
        #expect(kept.filter { $0.name.hasPrefix("new") }.count == 100)
        #expect(jar.cookieHeader(for: try #require(URL(string: "https://other.example.com/"))) == nil)
    }

    @Test func sameSiteNoneWithoutSecureIsIgnored() throws {
        let jar = CookieJar()
        let origin = try #require(URL(string: "https://example.org/"))
        jar.storeCookies(fromSetCookieFields: ["a=1; SameSite=None", "b=2; SameSite=None; Secure"], for: origin)
        #expect(jar.cookieHeader(for: origin) == "b=2")
    }
}
