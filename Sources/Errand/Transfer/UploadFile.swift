import Foundation

/// A local file sent as a body or a body part: checked and measured up front, so that a missing
/// file fails the request with a clear error before anything is sent, and never read whole.
enum UploadFile {
    /// The file's size in bytes.
    /// - Throws: ``ErrandError/fileSystem(_:)`` naming `subject`, the path and why it cannot be read.
    static func size(of url: URL, subject: String = "upload") throws(ErrandError) -> Int64 {
        guard url.isFileURL else { throw unreadable(url, subject: subject, reason: "not a file URL") }
        let path = url.path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw unreadable(url, subject: subject, reason: "no such file")
        }
        guard !isDirectory.boolValue else { throw unreadable(url, subject: subject, reason: "it is a directory") }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw unreadable(url, subject: subject, reason: "permission denied")
        }
        do {
            // Attributes describe a symbolic link itself, not the file it names.
            let attributes = try FileManager.default.attributesOfItem(atPath: url.resolvingSymlinksInPath().path)
            guard let size = (attributes[.size] as? NSNumber)?.int64Value else {
                throw unreadable(url, subject: subject, reason: "its size is unknown")
            }
            return size
        } catch let error as ErrandError {
            throw error
        } catch {
            throw unreadable(url, subject: subject, reason: error.localizedDescription)
        }
    }

    static func unreadable(_ url: URL, subject: String, reason: String) -> ErrandError {
        .fileSystem("\(subject): cannot read file at \(url.path): \(reason)")
    }
}
