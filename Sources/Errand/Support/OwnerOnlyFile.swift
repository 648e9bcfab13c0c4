import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Files only their owner can read (0600, folders 0700), replaced atomically: cache entries and
/// download records hold private data, and a reader or a crash must see the old file or the new
/// one, never a mix.
enum OwnerOnlyFile {
    /// Ends the name of a file being written; one left long ago by a crash may be swept.
    static let temporarySuffix = ".partial"

    /// Writes `data` to a temporary file beside `url`, then renames it over `url`.
    /// - Throws: ``ErrandError/fileSystem(_:)`` naming the file and the system's reason.
    static func write(_ data: Data, to url: URL, creatingDirectory: Bool = false) throws(ErrandError) {
        if creatingDirectory {
            try createDirectory(url.deletingLastPathComponent())
        }
        let temporaryPath = url.path + "." + UUID().uuidString + temporarySuffix
        let descriptor = open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw failure("cannot create", temporaryPath) }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            try handle.write(contentsOf: data)
            try handle.close()
        } catch {
            unlink(temporaryPath)
            throw .fileSystem("cannot write \(temporaryPath): \(error.localizedDescription)")
        }
        guard rename(temporaryPath, url.path) == 0 else {
            let error = failure("cannot move into place", url.path)
            unlink(temporaryPath)
            throw error
        }
    }

    /// Opens `url` for writing, owner-only (0600): appending to an existing file, or created or
    /// truncated. A file that already existed gets mode 0600 too, which `O_TRUNC` alone would not give it.
    /// - Throws: ``ErrandError/fileSystem(_:)`` naming the file and the system's reason.
    static func openForWriting(_ url: URL, appending: Bool = false) throws(ErrandError) -> FileHandle {
        let flags = O_WRONLY | O_CLOEXEC | (appending ? O_APPEND : O_CREAT | O_TRUNC)
        let descriptor = open(url.path, flags, 0o600)
        guard descriptor >= 0 else { throw failure(appending ? "cannot open" : "cannot create", url.path) }
        guard fchmod(descriptor, 0o600) == 0 else {
            let error = failure("cannot restrict access to", url.path)
            close(descriptor)
            throw error
        }
        return FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    }

    /// Creates `directory` and any missing parents, readable by the owner only.
    /// - Throws: ``ErrandError/fileSystem(_:)`` naming the folder and why.
    static func createDirectory(_ directory: URL) throws(ErrandError) {
        do {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .fileSystem("cannot create directory \(directory.path): \(error.localizedDescription)")
        }
    }

    /// `what` failed on `path`, with `errno`'s explanation.
    static func failure(_ what: String, _ path: String) -> ErrandError {
        .fileSystem("\(what) \(path): \(String(cString: strerror(errno)))")
    }
}
