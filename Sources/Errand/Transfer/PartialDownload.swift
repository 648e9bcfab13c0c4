import Foundation

/// The on-disk side of one resumable download: a partial file that grows beside the target, and
/// a small record of what it holds.
///
/// URLSession's own resume data does not work on Linux, so a download resumes by hand: the next
/// attempt sends `Range: bytes=N-` with an `If-Range` validator, and the body is appended to the
/// partial file chunk by chunk. For a target `photo.jpg` the pair is:
///
/// - `photo.jpg.errand-partial` — the bytes received so far, always a prefix of the resource;
/// - `photo.jpg.errand-partial.json` — the URL, the validators (`ETag`, `Last-Modified`) and the
///   expected total length, written atomically before the first body byte.
///
/// Both names derive from the target path alone, so a new process given the same target and URL
/// finds them and resumes. The target itself is only ever replaced, atomically, by a complete file.
///
/// Use: ``resumeHeaders()`` before sending; ``begin(statusCode:headers:)`` on the response head;
/// ``write(_:)`` per body chunk; then ``complete()``, ``suspend()`` (failure or cancel: keep the
/// partial) or ``discard()``. All members may be called from any thread.
package final class PartialDownload: Sendable {
    /// What to do with the response whose head ``begin(statusCode:headers:)`` was given.
    enum Disposition: Equatable, Sendable {
        /// Stream the body to disk with ``write(_:)``: `offset` bytes are already there (non-zero
        /// when resuming), and `expected` is the resource's total length when known.
        case writing(offset: Int64, expected: Int64?)
        /// An error status: nothing was written; keep the body in memory as for any failed request.
        case notADownload
        /// The partial no longer matches the resource and has been discarded: send the request again,
        /// now without `Range` (``resumeHeaders()`` will return none).
        case restartWithoutRange
    }

    /// Where the finished file goes: the target path, or, when that is a directory, the URL's
    /// last path component inside it.
    let targetURL: URL
    /// The bytes received so far: the target path with `.errand-partial` appended.
    let partialURL: URL
    /// The metadata of the partial: the target path with `.errand-partial.json` appended.
    let recordURL: URL
    /// The resource being downloaded; a record for another URL is never resumed.
    let url: URL

    private let state = Locked(State())

    private struct State {
        /// The resume ``resumeHeaders()`` asked for, checked against the response in `begin`.
        var requested: Resume?
        /// Open only between a `.writing` disposition and `complete`, `suspend` or `discard`.
        var output: FileHandle?
        /// Chunks not yet written: a write per 16 KiB chunk would cost more than the network takes
        /// to deliver it, and URLSession queues what its delegate has not yet taken, without limit.
        var unwritten = Data()
        var written: Int64 = 0
        var expected: Int64?
    }

    /// A resume asked for: the partial measured `partialSize` bytes and the `Range` starts at
    /// `offset`, one byte earlier when the partial already held the whole resource.
    private struct Resume {
        var offset: Int64
        var partialSize: Int64
        var record: Record
    }

    /// Resolves the target, touching nothing on disk.
    ///
    /// A `targetPath` that is an existing directory, or ends in `/`, gets the URL's last path
    /// component appended (`index` when the URL has none, or it is `.` or `..`).
    ///
    /// - Throws: ``ErrandError/fileSystem(_:)`` when `targetPath` is empty.
    init(targetPath: String, url: URL) throws(ErrandError) {
        guard !targetPath.isEmpty else { throw .fileSystem("download to \"\": the path is empty") }
        var target = URL(fileURLWithPath: targetPath)
        var isDirectory: ObjCBool = false
        if targetPath.hasSuffix("/")
            || (FileManager.default.fileExists(atPath: target.path, isDirectory: &isDirectory) && isDirectory.boolValue)
        {
            target = target.appendingPathComponent(Self.fileName(for: url), isDirectory: false)
        }
        self.targetURL = target
        self.partialURL = URL(fileURLWithPath: target.path + ".errand-partial")
        self.recordURL = URL(fileURLWithPath: target.path + ".errand-partial.json")
        self.url = url
    }

    /// A file name taken from the URL that cannot leave the directory it is put in.
    private static func fileName(for url: URL) -> String {
        let component = url.lastPathComponent.replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "\0", with: "_")
        return ["", "_", ".", ".."].contains(component) ? "index" : component
    }

    // MARK: The exchange

    /// The headers that resume an earlier attempt, or `[:]` to download from the start.
    ///
    /// Resumes only when a record for this same URL and a non-empty partial file exist, the record
    /// has a validator (strong ETag, else Last-Modified), and the partial is no longer than the
    /// expected length. A partial of exactly that length asks for its last byte again, which a 206
    /// then replaces. Call it before each send: ``begin(statusCode:headers:)`` checks the response
    /// against what was asked for here.
    func resumeHeaders() -> [String: String] {
        state.withLock { state in
            state.requested = nil
            guard let record = readRecord(), record.url == url.absoluteString, let validator = record.validator,
                let size = partialSize(), size > 0, size <= (record.expectedLength ?? .max)
            else { return [:] }
            // Every byte arrived but the attempt ended first (a cancel just before completion):
            // asking for the last byte again checks the resource is unchanged without fetching it all.
            let offset = size == record.expectedLength ? size - 1 : size
            state.requested = Resume(offset: offset, partialSize: size, record: record)
            return ["Range": "bytes=\(offset)-", "If-Range": validator]
        }
    }

    /// Decides what the response does to the partial file, and prepares it for writing.
    ///
    /// - A 206 whose `Content-Range` starts where the partial ends, with the same total length and
    ///   validator, appends to the partial.
    /// - Any other 2xx (the server ignored the range, or the resource changed) starts from zero: the
    ///   partial is truncated and a new record written before any body byte.
    /// - A 416, or a 206 that does not continue the partial, discards the partial:
    ///   ``Disposition/restartWithoutRange``.
    /// - Any other status touches nothing: ``Disposition/notADownload``.
    ///
    /// A body with a `Content-Encoding` is written as delivered (decoded), but its length is not
    /// checked and it is never resumed: its byte offsets are not the server's.
    ///
    /// - Throws: ``ErrandError/fileSystem(_:)`` when the partial file or record cannot be written.
    func begin(statusCode: Int, headers: [String: String]) throws(ErrandError) -> Disposition {
        let result: Result<Disposition, ErrandError> = state.withLock { state in
            Self.closeOutput(&state)
            let requested = state.requested
            state.requested = nil
            state.written = 0
            state.expected = nil
            do throws(ErrandError) {
                switch statusCode {
                case 206:
                    guard let range = ContentRange(headers.headerField("Content-Range")),
                        range.start == requested?.offset ?? 0
                    else {
                        removeFiles()
                        return .success(.restartWithoutRange)
                    }
                    if let requested {
                        return .success(try resume(requested, range: range, headers: headers, state: &state))
                    }
                    // A range nobody asked for, but from the start: as good as a 200.
                    return .success(try restart(headers: headers, total: range.total, state: &state))
                case 416 where requested != nil:
                    removeFiles()
                    return .success(.restartWithoutRange)
                case 200..<300:
                    let length = headers.headerField("Content-Length").flatMap { Int64($0.trimmed) }
                    return .success(try restart(headers: headers, total: length, state: &state))
                default:
                    return .success(.notADownload)
                }
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    private func resume(
        _ requested: Resume, range: ContentRange, headers: [String: String],
        state: inout State
    ) throws(ErrandError) -> Disposition {
        let record = requested.record
        let etag = headers.headerField("ETag")
        let lastModified = headers.headerField("Last-Modified")
        let resumedByDate = record.etag.map { $0.hasPrefix("W/") } ?? true
        let changed =
            (range.total != nil && record.expectedLength != nil && range.total != record.expectedLength)
            || (etag != nil && record.etag != nil && etag != record.etag)
            || (resumedByDate && lastModified != nil && lastModified != record.lastModified)
        guard !changed, let output = try? OwnerOnlyFile.openForWriting(partialURL, appending: true) else {
            removeFiles()
            return .restartWithoutRange
        }
        // Another process may have grown or cut the partial since resumeHeaders measured it.
        guard partialSize() == requested.partialSize,
            ftruncate(output.fileDescriptor, off_t(requested.offset)) == 0
        else {
            try? output.close()
            removeFiles()
            return .restartWithoutRange
        }
        let expected = range.total ?? record.expectedLength
        if expected != record.expectedLength {
            var updated = record
            updated.expectedLength = expected
            do throws(ErrandError) {
                try writeRecord(updated)
            } catch {
                try? output.close()
                throw error
            }
        }
        state.output = output
        state.written = requested.offset
        state.expected = expected
        return .writing(offset: requested.offset, expected: expected)
    }

    private func restart(headers: [String: String], total: Int64?, state: inout State) throws(ErrandError)
        -> Disposition
    {
        let encoding = headers.headerField("Content-Encoding")?.trimmed.lowercased() ?? "identity"
        let isIdentity = encoding == "identity" || encoding.isEmpty
        let record = Record(
            url: url.absoluteString, etag: isIdentity ? headers.headerField("ETag") : nil,
            lastModified: isIdentity ? headers.headerField("Last-Modified") : nil,
            expectedLength: isIdentity ? total : nil)
        try createParentDirectory()
        // The old record must go before the partial is truncated: a crash in between must not
        // leave new validators beside old bytes, or old validators beside new ones.
        try remove(recordURL)
        let output = try OwnerOnlyFile.openForWriting(partialURL, subject: subject)
        do throws(ErrandError) {
            try writeRecord(record)
        } catch {
            try? output.close()
            throw error
        }
        state.output = output
        state.written = 0
        state.expected = record.expectedLength
        return .writing(offset: 0, expected: record.expectedLength)
    }

    /// Appends a body chunk to the partial file.
    ///
    /// - Throws: ``ErrandError/fileSystem(_:)`` when the disk write fails, or no response head was
    ///   accepted for writing.
    func write(_ chunk: Data) throws(ErrandError) {
        // Disk writes happen under the lock so that a cancel on another thread cannot close the
        // handle under a write in flight; chunks arrive one at a time, so nothing waits long.
        let error: ErrandError? = state.withLock { state in
            guard state.output != nil else { return failure("no response is being written") }
            state.unwritten.append(chunk)
            state.written += Int64(chunk.count)
            guard state.unwritten.count >= Self.writeSize else { return nil }
            return flush(&state)
        }
        if let error { throw error }
    }

    private static let writeSize = 256 << 10

    /// Writes the chunks held back; an error names why the disk refused them.
    private func flush(_ state: inout State) -> ErrandError? {
        guard let output = state.output, !state.unwritten.isEmpty else { return nil }
        do {
            try output.write(contentsOf: state.unwritten)
        } catch {
            return failure(error.localizedDescription)
        }
        state.unwritten.removeAll(keepingCapacity: true)
        return nil
    }

    /// Bytes on disk so far, a resumed offset included, and the resource's total length when known.
    var progress: (written: Int64, expected: Int64?) {
        state.withLock { ($0.written, $0.expected) }
    }

    /// Checks the partial and moves it into place, atomically replacing any file at the target;
    /// the partial and its record are gone afterwards.
    ///
    /// - Returns: ``targetURL``.
    /// - Throws: ``ErrandError/fileSystem(_:)`` when nothing is being written, the length on disk
    ///   differs from the expected length (the partial is then discarded: it cannot be trusted), or
    ///   the move fails (the partial is then kept).
    func complete() throws(ErrandError) -> URL {
        let result: Result<URL, ErrandError> = state.withLock { state in
            guard let output = state.output else { return .failure(failure("no response is being written")) }
            if let error = flush(&state) {
                Self.closeOutput(&state)
                return .failure(error)
            }
            state.output = nil
            do {
                try output.synchronize()
                try output.close()
            } catch {
                return .failure(failure(error.localizedDescription))
            }
            let size = partialSize() ?? -1
            if let expected = state.expected, size != expected {
                removeFiles()
                return .failure(failure("\(size) bytes on disk, but the resource has \(expected)"))
            }
            guard size == state.written else {
                removeFiles()
                return .failure(failure("\(size) bytes on disk, but \(state.written) were received"))
            }
            // rename(2) replaces the target atomically: readers see the old file or the new one.
            guard rename(partialURL.path, targetURL.path) == 0 else {
                return .failure(failure("cannot move into place: \(String(cString: strerror(errno)))"))
            }
            try? FileManager.default.removeItem(at: recordURL)
            return .success(targetURL)
        }
        return try result.get()
    }

    /// Closes the partial file and keeps it, with its record, for the next attempt; for a failure or
    /// a cancel.
    func suspend() {
        state.withLock { state in
            _ = flush(&state)
            Self.closeOutput(&state)
            state.requested = nil
        }
    }

    /// Closes and removes the partial file and its record.
    func discard() {
        state.withLock { state in
            Self.closeOutput(&state)
            state.requested = nil
            removeFiles()
        }
    }

    // MARK: Files

    /// Closes the partial; chunks not yet written are dropped, so flush first to keep them.
    private static func closeOutput(_ state: inout State) {
        try? state.output?.close()
        state.output = nil
        state.unwritten.removeAll()
    }

    /// What errors about this download start with.
    private var subject: String { "download to \(targetURL.path)" }

    private func failure(_ reason: String) -> ErrandError {
        .fileSystem("\(subject): \(reason)")
    }

    private func partialSize() -> Int64? {
        var info = stat()
        return stat(partialURL.path, &info) == 0 ? Int64(info.st_size) : nil
    }

    private func readRecord() -> Record? {
        guard let data = try? Data(contentsOf: recordURL) else { return nil }
        return try? JSONDecoder().decode(Record.self, from: data)
    }

    /// Replaces the record atomically, so a reader (or a crash) only ever sees a whole record.
    private func writeRecord(_ record: Record) throws(ErrandError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // A struct of strings and numbers always encodes.
        let data = (try? encoder.encode(record)) ?? Data()
        try OwnerOnlyFile.write(data, to: recordURL, subject: subject)
    }

    private func createParentDirectory() throws(ErrandError) {
        let directory = targetURL.deletingLastPathComponent()
        guard !FileManager.default.fileExists(atPath: directory.path) else { return }
        try OwnerOnlyFile.createDirectory(directory, subject: subject)
    }

    /// Removes a file; one that is already gone is fine.
    private func remove(_ file: URL) throws(ErrandError) {
        guard unlink(file.path) == 0 || errno == ENOENT else {
            throw failure("cannot remove \(file.path): \(String(cString: strerror(errno)))")
        }
    }

    /// The record goes first: a partial without a record is never resumed, the reverse could be.
    private func removeFiles() {
        try? remove(recordURL)
        try? remove(partialURL)
    }
}
