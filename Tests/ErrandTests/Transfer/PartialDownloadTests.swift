import Foundation
import Testing

@testable import Errand

@Suite("PartialDownload: the on-disk side of resumable downloads")
struct PartialDownloadTests {
    let url = URL(string: "https://example.com/files/blob.bin?v=1")!
    let resource = Data((0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })
    let etag = "\"v1\""

    /// A fresh directory, removed when `body` returns.
    func withTemporaryDirectory<T>(_ body: (URL) throws -> T) throws -> T {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("errand-download-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        return try body(directory)
    }

    func exists(_ url: URL) -> Bool { FileManager.default.fileExists(atPath: url.path) }

    func permissions(of url: URL) -> Int? {
        let attributes = try? FileManager.default.attributesOfItem(atPath: url.path)
        return (attributes?[.posixPermissions] as? NSNumber)?.intValue
    }

    func fullHeaders() -> [String: String] {
        ["Content-Length": "1000", "ETag": etag, "Last-Modified": "Sat, 01 Mar 2025 10:00:00 GMT"]
    }

    /// Leaves the first `count` bytes as a suspended partial, as a failed first attempt would.
    func leavePartial(_ target: URL, count: Int, headers: [String: String]? = nil) throws {
        let download = try PartialDownload(targetPath: target.path, url: url)
        #expect(download.resumeHeaders() == [:])
        #expect(
            try download.begin(statusCode: 200, headers: headers ?? fullHeaders())
                == .writing(offset: 0, expected: 1000))
        try download.write(resource.prefix(count))
        download.suspend()
    }

    @Test func freshStartStreamsToThePartialAndCompletesAtomically() throws {
        try withTemporaryDirectory { directory in
            let target = directory.appendingPathComponent("out.bin")
            let download = try PartialDownload(targetPath: target.path, url: url)
            #expect(download.targetURL == target)
            #expect(download.partialURL.path == target.path + ".errand-partial")
            #expect(download.recordURL.path == target.path + ".errand-partial.json")
            #expect(download.resumeHeaders() == [:])
            #expect(try download.begin(statusCode: 200, headers: fullHeaders()) == .writing(offset: 0, expected: 1000))
            // The record exists before the first body byte.
            #expect(exists(download.recordURL))
            #expect(download.progress == (0, 1000))
            for start in stride(from: 0, to: 1000, by: 300) {
                try download.write(resource[start..<min(start + 300, 1000)])
                #expect(!exists(target))
            }
            #expect(download.progress == (1000, 1000))
            #expect(try download.complete() == target)
            #expect(try Data(contentsOf: target) == resource)
            #expect(!exists(download.partialURL))
            #expect(!exists(download.recordURL))
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["out.bin"])
        }
    }

    @Test func aNewInstanceResumesWithRangeAndIfRange() throws {
        try withTemporaryDirectory { directory in
            let target = directory.appendingPathComponent("out.bin")
            try leavePartial(target, count: 400)

            // A new process: only the target path and the URL are known.
            let resumed = try PartialDownload(targetPath: target.path, url: url)
            #expect(resumed.resumeHeaders() == ["Range": "bytes=400-", "If-Range": etag])
            let disposition = try resumed.begin(
                statusCode: 206,
                headers: ["Content-Range": "bytes 400-999/1000", "eTaG": etag, "Content-Length": "600"])
            #expect(disposition == .writing(offset: 400, expected: 1000))
            #expect(resumed.progress == (400, 1000))
            try resumed.write(resource[400...])
            #expect(resumed.progress == (1000, 1000))
            #expect(try resumed.complete() == target)
            #expect(try Data(contentsOf: target) == resource)
            #expect(!exists(resumed.partialURL) && !exists(resumed.recordURL))
        }
    }

    @Test func aPartialHoldingEveryByteAsksForItsLastByteAgain() throws {
        try withTemporaryDirectory { directory in
            // A cancel that lands after the last chunk but before completion keeps the whole body.
            let target = directory.appendingPathComponent("out.bin")
            try leavePartial(target, count: 1000)

            let resumed = try PartialDownload(targetPath: target.path, url: url)
            #expect(resumed.resumeHeaders() == ["Range": "bytes=999-", "If-Range": etag])
            let disposition = try resumed.begin(
                statusCode: 206, headers: ["Content-Range": "bytes 999-999/1000", "ETag": etag, "Content-Length": "1"])
            #expect(disposition == .writing(offset: 999, expected: 1000))
            try resumed.write(resource.suffix(1))
            #expect(try resumed.complete() == target)
            #expect(try Data(contentsOf: target) == resource)
        }
    }

    @Test func aCrashWithoutSuspendStillLeavesAResumablePair() throws {
        try withTemporaryDirectory { directory in
            // Chunks are written in batches of 256 KiB; a crash loses at most the batch in memory.
            let large = Data((0..<(600 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 13) })
            let target = directory.appendingPathComponent("out.bin")
            let first = try PartialDownload(targetPath: target.path, url: url)
            _ = try first.begin(statusCode: 200, headers: ["Content-Length": "\(large.count)", "ETag": etag])
            try first.write(large.prefix(300 << 10))
            let second = try PartialDownload(targetPath: target.path, url: url)
            #expect(second.resumeHeaders() == ["Range": "bytes=\(300 << 10)-", "If-Range": etag])
            #expect(try Data(contentsOf: second.partialURL) == large.prefix(300 << 10))
        }
    }

    @Test func ifRangeFallsBackToLastModifiedAndNeedsAValidator() throws {
        try withTemporaryDirectory { directory in
            let weak = directory.appendingPathComponent("weak.bin")
            try leavePartial(
                weak, count: 10,
                headers: [
                    "Content-Length": "1000", "ETag": "W/\"v1\"", "Last-Modified": "Sat, 01 Mar 2025 10:00:00 GMT",
                ])
            #expect(
                try PartialDownload(targetPath: weak.path, url: url).resumeHeaders()
                    == ["Range": "bytes=10-", "If-Range": "Sat, 01 Mar 2025 10:00:00 GMT"])

            let none = directory.appendingPathComponent("none.bin")
            try leavePartial(none, count: 10, headers: ["Content-Length": "1000", "ETag": "W/\"v1\""])
            #expect(try PartialDownload(targetPath: none.path, url: url).resumeHeaders() == [:])

            let encoded = directory.appendingPathComponent("encoded.bin")
            let download = try PartialDownload(targetPath: encoded.path, url: url)
            var headers = fullHeaders()
            headers["Content-Encoding"] = "gzip"
            #expect(try download.begin(statusCode: 200, headers: headers) == .writing(offset: 0, expected: nil))
            try download.write(resource.prefix(10))
            download.suspend()
            #expect(try PartialDownload(targetPath: encoded.path, url: url).resumeHeaders() == [:])
        }
    }

    @Test func aRecordForAnotherURLIsNotResumed() throws {
        try withTemporaryDirectory { directory in
            let target = directory.appendingPathComponent("out.bin")
            try leavePartial(target, count: 400)
            let other = try PartialDownload(targetPath: target.path, url: URL(string: "https://example.com/other")!)
            #expect(other.resumeHeaders() == [:])
        }
    }

    @Test func a200AfterAPartialStartsOverFromZero() throws {
        try withTemporaryDirectory { directory in
            let target = directory.appendingPathComponent("out.bin")
            try leavePartial(target, count: 400)
            let download = try PartialDownload(targetPath: target.path, url: url)
            #expect(download.resumeHeaders()["Range"] == "bytes=400-")
            let changed = Data(resource.reversed())
            var headers = fullHeaders()
            headers["ETag"] = "\"v2\""
            #expect(try download.begin(statusCode: 200, headers: headers) == .writing(offset: 0, expected: 1000))
            #expect(download.progress == (0, 1000))
            try download.write(changed)
            #expect(try download.complete() == target)
            #expect(try Data(contentsOf: target) == changed)
        }
    }

    @Test(arguments: [
        ["Content-Range": "bytes 400-999/1000", "ETag": "\"v2\""],  // another version
        ["Content-Range": "bytes 300-999/1000", "ETag": "\"v1\""],  // another start
        ["Content-Range": "bytes 400-1999/2000", "ETag": "\"v1\""],  // another length
        ["Content-Range": "bytes */1000"],  // unparseable for a 206
        [:],  // no Content-Range at all
    ])
    func a206ThatDoesNotContinueThePartialRestartsCleanly(headers: [String: String]) throws {
        try withTemporaryDirectory { directory in
            let target = directory.appendingPathComponent("out.bin")
            try leavePartial(target, count: 400)
            let download = try PartialDownload(targetPath: target.path, url: url)
            _ = download.resumeHeaders()
            #expect(try download.begin(statusCode: 206, headers: headers) == .restartWithoutRange)
            #expect(!exists(download.partialURL) && !exists(download.recordURL) && !exists(target))
            #expect(download.resumeHeaders() == [:])
            #expect(throws: ErrandError.self) { try download.write(Data([1])) }
        }
    }

    @Test func a416RestartsCleanly() throws {
        try withTemporaryDirectory { directory in
            let target = directory.appendingPathComponent("out.bin")
            try leavePartial(target, count: 400)
            let download = try PartialDownload(targetPath: target.path, url: url)
            _ = download.resumeHeaders()
            #expect(
                try download.begin(statusCode: 416, headers: ["Content-Range": "bytes */300"]) == .restartWithoutRange)
            #expect(!exists(download.partialURL) && !exists(download.recordURL))
            #expect(download.resumeHeaders() == [:])
        }
    }

    @Test(arguments: [404, 500, 304, 416])
    func anErrorStatusWritesNothingAndKeepsAnEarlierPartial(statusCode: Int) throws {
        try withTemporaryDirectory { directory in
            // Without an earlier partial: nothing appears at all (a 416 without a Range is an error too).
            let fresh = try PartialDownload(targetPath: directory.appendingPathComponent("new.bin").path, url: url)
            #expect(try fresh.begin(statusCode: statusCode, headers: ["Content-Length": "9"]) == .notADownload)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
            #expect(throws: ErrandError.self) { try fresh.write(Data("not found".utf8)) }
            #expect(throws: ErrandError.self) { try fresh.complete() }

            guard statusCode != 416 else { return }
            let target = directory.appendingPathComponent("out.bin")
            try leavePartial(target, count: 400)
            let download = try PartialDownload(targetPath: target.path, url: url)
            let partialBefore = try Data(contentsOf: download.partialURL)
            let recordBefore = try Data(contentsOf: download.recordURL)
            _ = download.resumeHeaders()
            #expect(try download.begin(statusCode: statusCode, headers: [:]) == .notADownload)
            download.suspend()
            #expect(try Data(contentsOf: download.partialURL) == partialBefore)
            #expect(try Data(contentsOf: download.recordURL) == recordBefore)
            #expect(!exists(target))
            #expect(download.resumeHeaders() == ["Range": "bytes=400-", "If-Range": etag])
        }
    }

    @Test func aDirectoryTargetGetsTheURLsLastPathComponent() throws {
        try withTemporaryDirectory { directory in
            #expect(try PartialDownload(targetPath: directory.path, url: url).targetURL.lastPathComponent == "blob.bin")
            for odd in [
                "https://example.com", "https://example.com/", "https://example.com/a/..", "https://example.com/.",
            ] {
                let download = try PartialDownload(targetPath: directory.path, url: URL(string: odd)!)
                #expect(download.targetURL.path == directory.appendingPathComponent("index").path, "\(odd)")
            }
            let slash = try PartialDownload(targetPath: directory.path, url: URL(string: "https://example.com/a%2Fb")!)
            #expect(slash.targetURL.path == directory.appendingPathComponent("a_b").path)

            // A path ending in "/" names a directory, created 0700 on the first write.
            let nested = try PartialDownload(targetPath: directory.path + "/new/sub/", url: url)
            #expect(nested.targetURL.path == directory.path + "/new/sub/blob.bin")
            #expect(!exists(directory.appendingPathComponent("new")))
            _ = try nested.begin(statusCode: 200, headers: ["Content-Length": "3"])
            try nested.write(Data("abc".utf8))
            #expect(try nested.complete().path == directory.path + "/new/sub/blob.bin")
            #expect(permissions(of: directory.appendingPathComponent("new/sub")) == 0o700)
            #expect(permissions(of: directory.appendingPathComponent("new")) == 0o700)

            #expect(throws: ErrandError.fileSystem("download to \"\": the path is empty")) {
                try PartialDownload(targetPath: "", url: url)
            }
        }
    }

    @Test func anExistingTargetIsReplacedOnlyOnCompletion() throws {
        try withTemporaryDirectory { directory in
            let target = directory.appendingPathComponent("out.bin")
            try Data("old".utf8).write(to: target)
            let download = try PartialDownload(targetPath: target.path, url: url)
            _ = try download.begin(statusCode: 200, headers: fullHeaders())
            try download.write(resource.prefix(500))
            download.suspend()
            #expect(try Data(contentsOf: target) == Data("old".utf8))

            let resumed = try PartialDownload(targetPath: target.path, url: url)
            _ = resumed.resumeHeaders()
            _ = try resumed.begin(statusCode: 206, headers: ["Content-Range": "bytes 500-999/1000"])
            try resumed.write(resource[500...])
            #expect(try Data(contentsOf: target) == Data("old".utf8))
            _ = try resumed.complete()
            #expect(try Data(contentsOf: target) == resource)
        }
    }

    @Test func aLengthMismatchFailsAndLeavesNothing() throws {
        try withTemporaryDirectory { directory in
            let target = directory.appendingPathComponent("out.bin")
            let download = try PartialDownload(targetPath: target.path, url: url)
            _ = try download.begin(statusCode: 200, headers: fullHeaders())
            try download.write(resource.prefix(999))
            #expect(
                throws: ErrandError.fileSystem(
                    "download to \(target.path): 999 bytes on disk, but the resource has 1000")
            ) { try download.complete() }
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)

            let longer = try PartialDownload(targetPath: target.path, url: url)
            _ = try longer.begin(statusCode: 200, headers: fullHeaders())
            try longer.write(resource + Data([0]))
            #expect(throws: ErrandError.self) { try longer.complete() }
            #expect(!exists(target))
        }
    }

    @Test func anUnknownLengthCompletesWithWhateverArrived() throws {
        try withTemporaryDirectory { directory in
            let target = directory.appendingPathComponent("out.bin")
            let download = try PartialDownload(targetPath: target.path, url: url)
            #expect(try download.begin(statusCode: 200, headers: [:]) == .writing(offset: 0, expected: nil))
            try download.write(resource)
            #expect(download.progress == (1000, nil))
            _ = try download.complete()
            #expect(try Data(contentsOf: target) == resource)
        }
    }

    @Test func discardRemovesThePartialAndItsRecord() throws {
        try withTemporaryDirectory { directory in
            let target = directory.appendingPathComponent("out.bin")
            let download = try PartialDownload(targetPath: target.path, url: url)
            _ = try download.begin(statusCode: 200, headers: fullHeaders())
            try download.write(resource.prefix(10))
            download.discard()
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
            #expect(throws: ErrandError.self) { try download.write(Data([1])) }
        }
    }

    @Test func filesAreOwnerOnly() throws {
        try withTemporaryDirectory { directory in
            let target = directory.appendingPathComponent("out.bin")
            // A leftover partial with a looser mode is tightened when reused.
            #expect(
                FileManager.default.createFile(
                    atPath: target.path + ".errand-partial", contents: Data("junk".utf8),
                    attributes: [.posixPermissions: 0o644]))
            let download = try PartialDownload(targetPath: target.path, url: url)
            _ = try download.begin(statusCode: 200, headers: fullHeaders())
            try download.write(resource.prefix(10))
            #expect(permissions(of: download.partialURL) == 0o600)
            #expect(permissions(of: download.recordURL) == 0o600)
            try download.write(resource.dropFirst(10))
            _ = try download.complete()
            #expect(permissions(of: target) == 0o600)
        }
    }
}
