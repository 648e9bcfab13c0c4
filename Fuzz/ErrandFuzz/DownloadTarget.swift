import Errand
import Foundation

/// What a server and the disk say about a resumable download: `Content-Range` values, and the
/// partial download's record read back. A range that parses must make sense and read back the
/// same when written again; a record that decodes must encode and decode to itself.
enum DownloadTarget {
    static func run(_ data: Data) {
        var input = FuzzInput(data)
        if input.bool() {
            record(Data(input.rest()))
        } else {
            contentRange(String(decoding: input.rest(), as: UTF8.self))
        }
    }

    private static func contentRange(_ value: String) {
        guard let range = ContentRange(value) else { return }
        require(range.start >= 0 && range.end >= range.start, "\(value): \(range.start)-\(range.end)")
        if let total = range.total { require(total > range.end, "\(value): total \(total) <= end \(range.end)") }
        let written = "bytes \(range.start)-\(range.end)/\(range.total.map(String.init) ?? "*")"
        guard let again = ContentRange(written) else { fatalError("\(written), written from \(value), does not parse") }
        require(
            again.start == range.start && again.end == range.end && again.total == range.total,
            "\(written) reads back differently")
    }

    private static func record(_ data: Data) {
        guard let record = try? JSONDecoder().decode(PartialDownload.Record.self, from: data) else { return }
        if let validator = record.validator {
            require(validator == record.etag || validator == record.lastModified, "validator \(validator)")
        }
        if let etag = record.etag, !etag.hasPrefix("W/") { require(record.validator == etag, "a strong ETag not used") }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let encoded = try? encoder.encode(record) else { fatalError("a decoded record does not encode") }
        let again = try? JSONDecoder().decode(PartialDownload.Record.self, from: encoded)
        require(again == record, "the record reads back differently")
    }
}
