import Foundation
import Testing

@testable import Errand

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The account file: what it keeps, how it is written, and what a reader of it finds after a crash.
@Suite("Account store")
struct AccountStoreTests {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("errand-accounts-\(UUID().uuidString)/nested", isDirectory: true)

    private func removeDirectory() {
        try? FileManager.default.removeItem(at: directory.deletingLastPathComponent())
    }

    @Test func savedAccountsAndTheCurrentOneReadBackFromAnOwnerOnlyFile() throws {
        defer { removeDirectory() }
        let store = try AccountStore<Token>(directory: directory)
        #expect(store.accounts.isEmpty && store.current == nil)
        try store.save(Token(access: "a1", refresh: "ra"), for: "ann")
        try store.save(Token(access: "b1", refresh: "rb"), for: "bob")
        #expect(store.current == "ann", "the first account saved becomes current")
        store.current = "bob"
        store.current = "nobody"
        #expect(store.current == "bob", "an unknown id leaves it unchanged")

        let reopened = try AccountStore<Token>(directory: directory)
        #expect(reopened.accounts == ["ann", "bob"])
        #expect(reopened.current == "bob")
        #expect(reopened.credential(for: "ann") == Token(access: "a1", refresh: "ra"))
        #expect(store.fileURL.lastPathComponent == "default.accounts.json")
        var status = stat()
        #expect(stat(store.fileURL.path, &status) == 0)
        #expect(status.st_mode & 0o777 == 0o600)
        #expect(stat(directory.path, &status) == 0 && status.st_mode & 0o777 == 0o700)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(leftovers == ["default.accounts.json"], "no temporary file is left behind")
    }

    @Test func storesOfDifferentNamesKeepDifferentFiles() throws {
        defer { removeDirectory() }
        try AccountStore<Token>(name: "work", directory: directory).save(Token(access: "w", refresh: "r"), for: "ann")
        #expect(try AccountStore<Token>(directory: directory).accounts.isEmpty)
        #expect(try AccountStore<Token>(name: "work", directory: directory).accounts == ["ann"])
    }

    @Test func aFileThatCannotBeReadFailsOpeningItNamingIt() throws {
        defer { removeDirectory() }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("default.accounts.json")
        try Data("not an account file".utf8).write(to: file)
        #expect {
            _ = try AccountStore<Token>(directory: directory)
        } throws: { error in
            guard case .decoding(let message) = error as? ErrandError else { return false }
            return message.contains(file.path)
        }

        try FileManager.default.removeItem(at: file)
        try FileManager.default.createDirectory(at: file, withIntermediateDirectories: false)
        #expect {
            _ = try AccountStore<Token>(directory: directory)
        } throws: { error in
            guard case .fileSystem(let message) = error as? ErrandError else { return false }
            return message.contains(file.path)
        }
    }

    @Test func aWriteThatFailsThrowsKeepsTheCredentialInMemoryAndTheFileIntact() throws {
        defer { removeDirectory() }
        let store = try AccountStore<Token>(directory: directory)
        try store.save(Token(access: "a1", refresh: "r1"), for: "ann")
        let before = try Data(contentsOf: store.fileURL)
        // A folder where the new file would be renamed to: the rename fails, as on a full disk.
        let blocked = directory.appendingPathComponent("blocked")
        try FileManager.default.createDirectory(at: blocked, withIntermediateDirectories: false)
        try FileManager.default.moveItem(at: store.fileURL, to: blocked.appendingPathComponent("saved"))
        try FileManager.default.createDirectory(at: store.fileURL, withIntermediateDirectories: false)

        #expect(throws: ErrandError.self) { try store.save(Token(access: "a2", refresh: "r2"), for: "ann") }
        #expect(store.credential(for: "ann") == Token(access: "a2", refresh: "r2"), "a refreshed token is not lost")
        #expect(try Data(contentsOf: blocked.appendingPathComponent("saved")) == before)

        // Once the file can be written again, the next change saves everything held.
        try FileManager.default.removeItem(at: store.fileURL)
        try store.save(Token(access: "b1", refresh: "rb"), for: "bob")
        #expect(
            try AccountStore<Token>(directory: directory).credential(for: "ann") == Token(access: "a2", refresh: "r2"))
    }

    @Test func signingOutMovesCurrentToTheFirstAccountLeft() async throws {
        defer { removeDirectory() }
        let store = try AccountStore<Token>(directory: directory)
        let agent = NetworkAgent(config: NetworkConfig(), transport: StubTransport { _ in Response(statusCode: 200) })
        for id in ["ann", "bob", "cid"] { try store.save(Token(access: id, refresh: id), for: id) }
        store.current = "bob"

        await store.signOut("bob", agent: agent)
        #expect(store.accounts == ["ann", "cid"] && store.current == "ann")
        #expect(store.credential(for: "bob") == nil)
        await store.signOut("cid", agent: agent)
        #expect(store.current == "ann")
        await store.signOutAll(agent: agent)
        #expect(store.accounts.isEmpty && store.current == nil)
        #expect(try AccountStore<Token>(directory: directory).accounts.isEmpty)
    }

    @Test func anAccountsFolderNameIsPathSafe() {
        let ids = ["ann", "../up", "a/b", "nul\0byte", "", ".", "..", "Ann", "a%2Fb"]
        let names = ids.map(AccountCacheDirPathFilter.folderName(for:))
        for name in names {
            #expect(!name.contains("/") && !name.contains("\0") && name != "." && name != "..")
            #expect(name.hasPrefix("account-"))
        }
        // Not even on a disk that ignores case, as macOS's does by default.
        #expect(Set(names.map { $0.lowercased() }).count == ids.count, "different ids never share a folder")
        #expect(AccountCacheDirPathFilter.folderName(for: "ann") == "account-ann")
    }

    // MARK: A crash while writing

    /// The child's part of ``aStoreKilledWhileWritingLeavesTheOldFileOrTheNew()``: saves a new
    /// credential over and over, printing each number once it is saved, until it is killed.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["ERRAND_ACCOUNT_WRITER"] != nil))
    func writeUntilKilled() throws {
        let directory = URL(fileURLWithPath: try #require(ProcessInfo.processInfo.environment["ERRAND_ACCOUNT_WRITER"]))
        let store = try AccountStore<Token>(directory: directory)
        for number in 1... {
            // Long values, so that a write takes long enough to be cut.
            let token = Token(access: "\(number)-" + String(repeating: "a", count: 64 * 1024), refresh: "\(number)")
            try store.save(token, for: "ann")
            FileHandle.standardOutput.write(Data("\(number)\n".utf8))
        }
    }

    @Test func aStoreKilledWhileWritingLeavesTheOldFileOrTheNew() throws {
        defer { removeDirectory() }
        let executable = try #require(CommandLine.arguments.first)
        for round in 1...3 {
            let child = try ChildProcess(
                executable, ["--testing-library", "swift-testing", "--filter", "writeUntilKilled"],
                environment: ["ERRAND_ACCOUNT_WRITER": directory.path])
            var printed = ""
            while printed.split(separator: "\n").count < 5 * round {
                let chunk = child.readAvailable()
                try #require(!chunk.isEmpty, "the writer stopped before it was killed")
                printed += String(decoding: chunk, as: UTF8.self)
            }
            kill(child.pid, SIGKILL)
            #expect(child.waitForExit() == -1)
            let saved = printed.split(separator: "\n").compactMap { Int($0) }.max() ?? 0

            let store = try AccountStore<Token>(directory: directory)
            let credential = try #require(store.credential(for: "ann"))
            let found = try #require(Int(credential.refresh))
            #expect(found >= saved, "a save the child finished is in the file")
        }
    }
}
