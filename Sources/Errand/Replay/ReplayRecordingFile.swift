import Foundation

/// The HAR file a recording grows, one exchange at a time, each written once.
///
/// The first exchange writes the whole file, atomically, in a layout whose end is known: the
/// `entries` array comes last but for a few bytes (`]`, the `version`, the closing braces).
/// Each later exchange is written over those few bytes — a comma, the entry, and the same end
/// again — so recording N exchanges writes each once, not the whole file N times, and between
/// two exchanges the file is a complete, valid HAR. Should the file not be as it was left (its
/// size or identity changed: someone else wrote it), it is written whole again from what the
/// recording holds. A process killed in the middle of an append may leave the file cut there.
///
/// A value the recording's writer queue owns: it is copied out, used and put back, never used
/// by two threads at once, and no lock is held while it writes.
struct ReplayRecordingFile: Sendable {
    let url: URL
    /// Where the file's end starts (after the last entry, or after `[` when there is none), its
    /// bytes, and whether the file holds an entry; `nil` until the file is written whole.
    private var layout: Layout?

    private struct Layout: Sendable {
        var endOffset: UInt64
        var end: Data
        var hasEntries: Bool
        /// Size and file number as left: anything else means someone else wrote the file.
        var size: UInt64
        var fileNumber: UInt64
    }

    init(url: URL) {
        self.url = url
    }

    /// Adds `entry` to the file: appended in place when the file is as it was left, else written
    /// whole from `archive()`, the recording with `entry` last.
    ///
    /// - Throws: ``ErrandError/fileSystem(_:)`` naming the path and the reason.
    mutating func append(_ entry: HTTPArchive.Entry, of archive: () -> HTTPArchive) throws(ErrandError) {
        if let layout, let identity = Self.identity(of: url), identity == (layout.size, layout.fileNumber) {
            do {
                return try appendInPlace(entry, layout)
            } catch {
                // Written whole below, from what the recording holds.
            }
        }
        try writeWhole(archive())
    }

    private mutating func appendInPlace(_ entry: HTTPArchive.Entry, _ layout: Layout) throws {
        let text = (layout.hasEntries ? Data(",\n".utf8) : Data("\n".utf8)) + Self.encoded(entry)
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        try handle.seek(toOffset: layout.endOffset)
        try handle.write(contentsOf: text + layout.end)
        let endOffset = layout.endOffset + UInt64(text.count)
        try handle.truncate(atOffset: endOffset + UInt64(layout.end.count))
        let (size, fileNumber) = Self.identity(of: url) ?? (0, 0)
        self.layout = Layout(
            endOffset: endOffset, end: layout.end, hasEntries: true, size: size, fileNumber: fileNumber)
    }

    private mutating func writeWhole(_ archive: HTTPArchive) throws(ErrandError) {
        var empty = archive
        empty.log.entries = []
        let skeleton = empty.encoded()
        // The empty `entries` array in the skeleton: `"entries" : [` then only white space to `]`.
        guard let (arrayStart, arrayEnd) = Self.emptyEntries(in: skeleton) else {
            // Not Errand's encoder's layout: write it whole, and whole again next time.
            layout = nil
            return try archive.write(to: url)
        }
        var file = Data(skeleton[..<arrayStart])
        for (index, entry) in archive.log.entries.enumerated() {
            file += Data((index == 0 ? "\n" : ",\n").utf8) + Self.encoded(entry)
        }
        let endOffset = UInt64(file.count)
        let end = Data("\n    ".utf8) + skeleton[arrayEnd...]
        file += end
        do {
            try file.write(to: url, options: .atomic)
        } catch {
            layout = nil
            throw .fileSystem("write HAR to \(url.path): \(error.localizedDescription)")
        }
        let (size, fileNumber) = Self.identity(of: url) ?? (0, 0)
        layout = Layout(
            endOffset: endOffset, end: end, hasEntries: !archive.log.entries.isEmpty, size: size,
            fileNumber: fileNumber)
    }

    /// An entry as the archive encodes it, indented to its place in the file.
    private static func encoded(_ entry: HTTPArchive.Entry) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let text = (try? encoder.encode(entry)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        // JSON text holds no line break inside a string: each one starts a line of the entry.
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        return Data(lines.map { $0.isEmpty ? "" : "      " + $0 }.joined(separator: "\n").utf8)
    }

    /// Where the empty `entries` array of an encoded archive starts (after `[`) and ends (at `]`).
    private static func emptyEntries(in data: Data) -> (Int, Int)? {
        guard let key = data.range(of: Data("\"entries\"".utf8)),
            let open = data[key.upperBound...].firstIndex(of: UInt8(ascii: "[")),
            data[key.upperBound..<open].allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: ":") })
        else { return nil }
        let afterOpen = data.index(after: open)
        guard let close = data[afterOpen...].firstIndex(where: { !Self.isWhiteSpace($0) }),
            data[close] == UInt8(ascii: "]")
        else { return nil }
        return (afterOpen, close)
    }

    private static func isWhiteSpace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
            || byte == UInt8(ascii: "\t")
    }

    /// The file's size and file number; `nil` when it is not there.
    private static func identity(of url: URL) -> (UInt64, UInt64)? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path),
            let size = (attributes[.size] as? NSNumber)?.uint64Value,
            let number = (attributes[.systemFileNumber] as? NSNumber)?.uint64Value
        else { return nil }
        return (size, number)
    }
}
