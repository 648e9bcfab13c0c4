import Foundation

/// The files a task's request body was encoded into: they go once the task has finished and no
/// transport reads them any more — a body file must outlive the transport's reading it.
struct TemporaryBodyFiles {
    private var files: [URL] = []
    /// From sending an attempt until the transport reports it completed, cancelled or not.
    private var isTransportReading = false

    mutating func adopt(_ file: URL) {
        files.append(file)
    }

    mutating func transportStarted() {
        isTransportReading = true
    }

    mutating func transportCompleted() {
        isTransportReading = false
    }

    /// The files to delete now, the task having finished; none while the transport may read one.
    mutating func takeUnused() -> [URL] {
        guard !isTransportReading else { return [] }
        defer { files = [] }
        return files
    }

    /// Deletes `files`, outside any lock.
    static func remove(_ files: [URL]) {
        for file in files {
            try? FileManager.default.removeItem(at: file)
        }
    }
}
