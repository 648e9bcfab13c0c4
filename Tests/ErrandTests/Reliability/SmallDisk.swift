import ErrandScenarios
import Foundation

/// A file system of its own for disk-fault tests: a `tmpfs` of a few hundred KiB, mounted
/// read-write or read-only, so a full disk and a read-only folder are real `ENOSPC` and `EROFS`
/// rather than permissions, which root ignores. Mounting needs root (or `CAP_SYS_ADMIN`): where
/// that is missing, ``canMount`` is false and the tests that need it are skipped.
final class SmallDisk: Sendable {
    /// Whether this process may mount a `tmpfs`; tried once.
    static let canMount: Bool = {
        guard let disk = try? SmallDisk(kibibytes: 16) else { return false }
        unmount(disk.root)
        return true
    }()

    /// Where the file system is mounted.
    let root: URL

    /// Mounts a file system of `kibibytes`; `mount` runs on a thread of its own, never one of the
    /// concurrency pool's.
    static func mount(kibibytes: Int, readOnly: Bool = false) async throws -> SmallDisk {
        try await onOwnThread { try SmallDisk(kibibytes: kibibytes, readOnly: readOnly) }
    }

    private init(kibibytes: Int, readOnly: Bool = false) throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("errand-small-disk-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let options = (readOnly ? "ro," : "") + "size=\(kibibytes)k,mode=0700"
        do {
            try Command.run("/bin/mount", ["-t", "tmpfs", "-o", options, "tmpfs", root.path])
        } catch {
            try? FileManager.default.removeItem(at: root)
            throw error
        }
    }

    // The last reference may go on a thread of the concurrency pool: unmount elsewhere.
    deinit { Thread { [root] in Self.unmount(root) }.start() }

    /// Fills the disk up, leaving at most `free` bytes, with a file ``makeRoom()`` deletes.
    func fill(leaving free: Int = 0) throws {
        let filler = root.appendingPathComponent("filler")
        guard FileManager.default.createFile(atPath: filler.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: filler.path])
        }
        let handle = try FileHandle(forWritingTo: filler)
        defer { try? handle.close() }
        let available = try self.available()
        guard available > free else { return }
        var remaining = available - free
        let chunk = Data(count: 4096)
        while remaining > 0 {
            do {
                try handle.write(contentsOf: chunk.prefix(remaining))
            } catch {
                return  // Full: tmpfs rounds to pages.
            }
            remaining -= min(remaining, chunk.count)
        }
    }

    /// Deletes the filler that ``fill(leaving:)`` wrote.
    func makeRoom() throws {
        try FileManager.default.removeItem(at: root.appendingPathComponent("filler"))
    }

    /// Bytes still free.
    func available() throws -> Int {
        let attributes = try FileManager.default.attributesOfFileSystem(forPath: root.path)
        return (attributes[.systemFreeSize] as? NSNumber)?.intValue ?? 0
    }

    /// The names of the files under `folder`, recursively, relative to it.
    func files(under folder: URL) -> [String] {
        (FileManager.default.enumerator(atPath: folder.path)?.allObjects as? [String] ?? []).filter {
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(
                atPath: folder.appendingPathComponent($0).path, isDirectory: &isDirectory)
                && !isDirectory.boolValue
        }
    }

    private static func unmount(_ root: URL) {
        _ = try? Command.run("/bin/umount", ["-l", root.path])
        try? FileManager.default.removeItem(at: root)
    }
}
