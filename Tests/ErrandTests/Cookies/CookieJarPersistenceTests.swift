import Errand
import Foundation
import Testing

/// A jar made from a file keeps the cookies that last across launches, owner-only.
struct CookieJarPersistenceTests {
    private let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
        "errand-jar-\(UUID().uuidString)")
    private var file: URL { folder.appendingPathComponent("cookies.json") }
    private let origin = URL(string: "https://api.example.com/v1/login")!

    private func cleanUp() { try? FileManager.default.removeItem(at: folder) }

    @Test func cookiesThatLastAreThereAfterARestartAndSessionCookiesAreNot() throws {
        defer { cleanUp() }
        let jar = try CookieJar(fileURL: file)
        jar.storeCookies(fromSetCookieFields: ["session=abc; Max-Age=3600; Secure; HttpOnly", "tab=1"], for: origin)
        #expect(jar.allCookies.count == 2)
        let reopened = try CookieJar(fileURL: file)
        let cookies = reopened.allCookies
        #expect(cookies.map(\.name) == ["session"])
        #expect(cookies.first?.isSecure == true && cookies.first?.isHTTPOnly == true)
        #expect(cookies.first?.path == "/v1")
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
    }

    @Test func aJarThatKeepsSessionCookiesSavesThemToo() throws {
        defer { cleanUp() }
        let jar = try CookieJar(fileURL: file, keepsSessionCookies: true)
        jar.storeCookies(fromSetCookieFields: ["tab=1"], for: origin)
        #expect(try CookieJar(fileURL: file, keepsSessionCookies: true).allCookies.map(\.name) == ["tab"])
    }

    @Test func removingTheCookiesEmptiesTheFile() throws {
        defer { cleanUp() }
        let jar = try CookieJar(fileURL: file)
        jar.storeCookies(fromSetCookieFields: ["a=1; Max-Age=60"], for: origin)
        jar.removeAll()
        #expect(try CookieJar(fileURL: file).isEmpty)
    }

    @Test func aFileThatIsNotAJarFailsNamingIt() throws {
        defer { cleanUp() }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("not json".utf8).write(to: file)
        #expect {
            _ = try CookieJar(fileURL: file)
        } throws: { error in
            guard case .decoding(let message) = error as? ErrandError else { return false }
            return message.contains(file.path)
        }
    }

    @Test func anExpiredCookieInTheFileIsNotLoaded() throws {
        defer { cleanUp() }
        let cookies = [
            Cookie(name: "old", value: "1", domain: "api.example.com", expiresAt: Date().addingTimeInterval(-1)),
            Cookie(name: "new", value: "1", domain: "api.example.com", expiresAt: Date().addingTimeInterval(600)),
        ]
        struct File: Encodable {
            var version = 1
            var cookies: [Cookie]
        }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try JSONEncoder().encode(File(cookies: cookies)).write(to: file)
        #expect(try CookieJar(fileURL: file).allCookies.map(\.name) == ["new"])
    }
}
