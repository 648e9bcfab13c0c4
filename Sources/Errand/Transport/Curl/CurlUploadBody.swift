import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A request body as libcurl's read callback takes it: from memory, or streamed from a file,
/// and rewindable, because libcurl resends the body when a reused connection turns out closed.
final class CurlUploadBody {
    private enum Source {
        case data(Data)
        case file(descriptor: Int32)
    }

    private let source: Source
    /// Where a streamed body comes from; `nil` for a body in memory.
    private let fileURL: URL?
    /// The body's length in bytes.
    let size: Int64
    /// Bytes handed to libcurl so far.
    private(set) var offset: Int64 = 0

    /// The body in memory.
    init(data: Data) {
        source = .data(data)
        fileURL = nil
        size = Int64(data.count)
    }

    /// Opens the file at `url` for streaming.
    /// - Throws: ``ErrandError/fileSystem(_:)`` when it cannot be opened or measured.
    init(fileURL url: URL) throws(ErrandError) {
        let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw .fileSystem("Cannot open the upload body \(url.path): \(String(cString: strerror(errno)))")
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            close(descriptor)
            throw .fileSystem("Cannot measure the upload body \(url.path): \(String(cString: strerror(errno)))")
        }
        source = .file(descriptor: descriptor)
        fileURL = url
        size = Int64(status.st_size)
    }

    deinit {
        if case .file(let descriptor) = source { close(descriptor) }
    }

    /// Copies the next bytes into `buffer` and returns how many, `0` at the end.
    /// - Throws: ``ErrandError/fileSystem(_:)`` naming the file when it cannot be read.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(ErrandError) -> Int {
        let count: Int
        switch source {
        case .data(let data):
            let start = Int(offset)
            count = min(buffer.count, data.count - start)
            guard count > 0 else { return 0 }
            data.copyBytes(to: buffer.bindMemory(to: UInt8.self), from: start..<start + count)
        case .file(let descriptor):
            guard let base = buffer.baseAddress else { return 0 }
            count = pread(descriptor, base, buffer.count, off_t(offset))
            guard count >= 0 else {
                let path = fileURL?.path ?? "?"
                throw .fileSystem("Cannot read the upload body \(path): \(String(cString: strerror(errno)))")
            }
        }
        offset += Int64(count)
        return count
    }

    /// Moves to `position` from the start; `false` when it lies outside the body.
    func seek(to position: Int64) -> Bool {
        guard (0...size).contains(position) else { return false }
        offset = position
        return true
    }
}
