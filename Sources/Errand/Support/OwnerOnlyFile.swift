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

    // Every error names the file and the system's reason, after `subject` ("download to …:")
    // when one is given, so that the caller's context needs no rewrapping.

    /// Writes `data` to a temporary file beside `url`, then renames it over `url`; `durable`
    /// makes the bytes reach the disk before the rename, so that not even a power cut leaves an
    /// empty file in its place.
    /// - Throws: ``ErrandError/fileSystem(_:)``.
    static func write(
        _ data: Data, to url: URL, creatingDirectory: Bool = false, durable: Bool = false, subject: String? = nil
    ) throws(ErrandError) {
        if creatingDirectory {
            try createDirectory(url.deletingLastPathComponent(), subject: subject)
        }
        let temporaryPath = url.path + "." + UUID().uuidString + temporarySuffix
        let descriptor = open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw failure(subject, "cannot create", temporaryPath) }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            try handle.write(contentsOf: data)
            if durable { try handle.synchronize() }
            try handle.close()
        } catch {
            unlink(temporaryPath)
            throw failure(subject, "cannot write", temporaryPath, reason: error.localizedDescription)
        }
        guard rename(temporaryPath, url.path) == 0 else {
            let error = failure(subject, "cannot move into place", url.path)
            unlink(temporaryPath)
            throw error
        }
    }

    /// Opens `url` for writing, owner-only (0600): appending to an existing file, or created or
    /// truncated. A file that already existed gets mode 0600 too, which `O_TRUNC` alone would not give it.
    /// - Throws: ``ErrandError/fileSystem(_:)``.
    static func openForWriting(_ url: URL, appending: Bool = false, subject: String? = nil) throws(ErrandError)
        -> FileHandle
    {
        let flags = O_WRONLY | O_CLOEXEC | (appending ? O_APPEND : O_CREAT | O_TRUNC)
        let descriptor = open(url.path, flags, 0o600)
        guard descriptor >= 0 else { throw failure(subject, appending ? "cannot open" : "cannot create", url.path) }
        guard fchmod(descriptor, 0o600) == 0 else {
            let error = failure(subject, "cannot restrict access to", url.path)
            close(descriptor)
            throw error
        }
        return FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    }

    /// Creates `directory` and any missing parents, readable by the owner only.
    /// - Throws: ``ErrandError/fileSystem(_:)``.
    static func createDirectory(_ directory: URL, subject: String? = nil) throws(ErrandError) {
        do {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw failure(subject, "cannot create directory", directory.path, reason: error.localizedDescription)
        }
    }

    /// `what` failed on `path`, for `reason` (by default `errno`'s explanation).
    static func failure(_ subject: String?, _ what: String, _ path: String, reason: String? = nil) -> ErrandError {
        let reason = reason ?? String(cString: strerror(errno))
        return .fileSystem((subject.map { "\($0): " } ?? "") + "\(what) \(path): \(reason)")
    }
}
