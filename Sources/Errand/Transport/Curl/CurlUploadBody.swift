import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A request body as libcurl's read callback takes it: from memory, streamed from a file, or
/// produced while it is sent. The first two are rewindable, because libcurl resends the body
/// when a reused connection turns out closed; a produced one only until its first byte went.
final class CurlUploadBody {
    private enum Source {
        case data(Data)
        /// The body is the file from `start` on.
        case file(descriptor: Int32, start: Int64)
        case stream(BodyStreamPump)
    }

    private let source: Source
    /// Where a streamed body comes from; `nil` for a body in memory.
    private let fileURL: URL?
    /// The body's length in bytes; `nil` when unknown until it ends, and then it is sent chunked.
    let size: Int64?
    /// Bytes handed to libcurl so far.
    private(set) var offset: Int64 = 0

    /// The body in memory.
    init(data: Data) {
        source = .data(data)
        fileURL = nil
        size = Int64(data.count)
    }

    /// Opens the file at `url` for streaming, from `start` bytes in.
    /// - Throws: ``ErrandError/fileSystem(_:)`` when it cannot be opened or measured, or is
    ///   shorter than `start`.
    init(fileURL url: URL, from start: Int64 = 0) throws(ErrandError) {
        let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw .fileSystem("Cannot open the upload body \(url.path): \(String(cString: strerror(errno)))")
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            close(descriptor)
            throw .fileSystem("Cannot measure the upload body \(url.path): \(String(cString: strerror(errno)))")
        }
        guard start >= 0, start <= Int64(status.st_size) else {
            close(descriptor)
            throw .fileSystem(
                "Cannot send the upload body \(url.path) from byte \(start): the file has \(status.st_size) bytes")
        }
        source = .file(descriptor: descriptor, start: start)
        fileURL = url
        size = Int64(status.st_size) - start
    }

    /// The bytes `pump` holds ready, as its stream produces them.
    init(pump: BodyStreamPump) {
        source = .stream(pump)
        fileURL = nil
        size = pump.length
    }

    deinit {
        if case .file(let descriptor, _) = source { close(descriptor) }
    }

    /// Whether the body ends with trailer fields, and so goes out chunked.
    var hasTrailers: Bool {
        if case .stream(let pump) = source { return pump.hasTrailers }
        return false
    }

    /// The trailer fields to send once ``read(into:)`` returned `0`.
    var trailers: [String: String] {
        if case .stream(let pump) = source { return pump.trailers }
        return [:]
    }

    /// Whether the body is produced while it is sent, and so cannot be sent again.
    var isProduced: Bool {
        if case .stream = source { return true }
        return false
    }

    /// Copies the next bytes into `buffer` and returns how many, `0` at the end, `nil` when a
    /// produced body has none ready yet: its pump wakes the transfer once it has.
    /// - Throws: ``ErrandError/fileSystem(_:)`` naming the file when it cannot be read; the
    ///   pump's error when a produced body cannot be sent whole.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(ErrandError) -> Int? {
        let count: Int
        switch source {
        case .data(let data):
            // A slice (`big[50_000..<50_100]`, `dropFirst(n)`) keeps its parent's indices.
            let start = data.startIndex + Int(offset)
            count = min(buffer.count, data.endIndex - start)
            guard count > 0 else { return 0 }
            data.copyBytes(to: buffer.bindMemory(to: UInt8.self), from: start..<start + count)
        case .file(let descriptor, let start):
            guard let base = buffer.baseAddress else { return 0 }
            // A file that grew since it was measured must not lengthen a body of declared size.
            let remaining = Int(clamping: max(0, (size ?? 0) - offset))
            count = pread(descriptor, base, min(buffer.count, remaining), off_t(start + offset))
            guard count >= 0 else {
                let path = fileURL?.path ?? "?"
                throw .fileSystem("Cannot read the upload body \(path): \(String(cString: strerror(errno)))")
            }
        case .stream(let pump):
            switch pump.read(into: buffer) {
            case .bytes(let read): count = read
            case .empty: return nil
            case .end: return 0
            case .failed(let error): throw error
            }
        }
        offset += Int64(count)
        return count
    }

    /// Moves to `position` from the start; `false` when it lies outside the body, or behind
    /// what a produced body already sent.
    func seek(to position: Int64) -> Bool {
        guard let size else { return position == offset }
        guard (0...size).contains(position), !isProduced || position == offset else { return false }
        offset = position
        return true
    }
}
