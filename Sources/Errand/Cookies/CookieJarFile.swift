import Foundation

/// The file a persisted ``CookieJar`` lives in: JSON, owner-only, replaced whole on each change.
final class CookieJarFile: Sendable {
    private struct Contents: Codable {
        var version = 1
        var cookies: [Cookie]
    }

    let url: URL
    let keepsSessionCookies: Bool
    /// The revision last written: a write of an older snapshot, which lost the race to the
    /// lock, is skipped. `Int.max` once the file is retired.
    private let written = Locked(0)
    /// Orders the writes; nothing but writers ever waits on it.
    private let writing = NSLock()

    init(url: URL, keepsSessionCookies: Bool) {
        self.url = url
        self.keepsSessionCookies = keepsSessionCookies
    }

    /// The cookies the file holds; none when there is no file yet.
    func read() throws(ErrandError) -> [Cookie] {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch let error as CocoaError where error.code == .fileReadNoSuchFile {
            return []
        } catch {
            throw .fileSystem("cookie jar: cannot read \(url.path): \(error.localizedDescription)")
        }
        do {
            return try JSONDecoder().decode(Contents.self, from: data).cookies
        } catch {
            throw .decoding("cookie jar: \(url.path) is not a cookie jar: \(error)")
        }
    }

    /// Writes the cookies of `cookies` that last — session cookies too when the jar keeps them —
    /// unless a newer revision was written already. A write that fails leaves the old file; the
    /// next change writes the whole jar again.
    func write(_ cookies: [Cookie], revision: Int) {
        writing.lock()
        defer { writing.unlock() }
        guard written.withLock({ $0 < revision }) else { return }
        let kept = cookies.filter { keepsSessionCookies || $0.isPersistent }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(Contents(cookies: kept)) else { return }
        do {
            try OwnerOnlyFile.write(data, to: url, creatingDirectory: true, subject: "cookie jar")
            written.withLock { $0 = revision }
        } catch {
            return
        }
    }

    /// Deletes the file and writes no more.
    func retire() {
        writing.lock()
        defer { writing.unlock() }
        written.withLock { $0 = .max }
        try? FileManager.default.removeItem(at: url)
    }
}
