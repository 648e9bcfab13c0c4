import ErrandTestServer
import Foundation
import Testing

@testable import Errand

@Suite("MultipartFormData: wire format, lengths, streaming to a file, arguments")
struct MultipartFormDataTests {
    /// A fresh directory, removed when `body` returns.
    func withTemporaryDirectory<T>(_ body: (URL) throws -> T) throws -> T {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("errand-multipart-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        return try body(directory)
    }

    func text(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }

    @Test func smallBodyHasExactBytes() throws {
        var form = MultipartFormData(boundary: "B")
        form.append("v", name: "f")
        form.append(Data("abc".utf8), name: "d", fileName: "a.txt")
        form.append(Data([0, 1]), name: "raw")
        form.append(Data("{}".utf8), name: "j", mimeType: "application/json")
        let expected =
            "--B\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\nv\r\n"
            + "--B\r\nContent-Disposition: form-data; name=\"d\"; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\n"
            + "abc\r\n"
            + "--B\r\nContent-Disposition: form-data; name=\"raw\"\r\n\r\n\u{0}\u{1}\r\n"
            + "--B\r\nContent-Disposition: form-data; name=\"j\"\r\nContent-Type: application/json\r\n\r\n{}\r\n"
            + "--B--\r\n"
        #expect(text(try form.encodedData()) == expected)
        #expect(try form.contentLength() == Int64(expected.utf8.count))
    }

    @Test func emptyBodyIsJustTheTerminator() throws {
        let form = MultipartFormData(boundary: "B")
        #expect(text(try form.encodedData()) == "--B--\r\n")
        #expect(try form.contentLength() == 7)
    }

    @Test func boundaryDefaultsToRandomHexAndNamesTheContentType() {
        let first = MultipartFormData()
        let second = MultipartFormData()
        #expect(first.boundary != second.boundary)
        #expect(first.boundary.hasPrefix("errand.boundary."))
        let digits = first.boundary.dropFirst("errand.boundary.".count)
        #expect(digits.count == 16 && digits.allSatisfy(\.isHexDigit))
        #expect(first.contentType == "multipart/form-data; boundary=\(first.boundary)")
        #expect(MultipartFormData(boundary: "a b").contentType == "multipart/form-data; boundary=\"a b\"")
    }

    @Test func fileNameAndMimeTypeAreInferredFromTheURL() throws {
        try withTemporaryDirectory { directory in
            let photo = directory.appendingPathComponent("Photo.JPG")
            let blob = directory.appendingPathComponent("blob.weird")
            try Data("jpg".utf8).write(to: photo)
            try Data("bin".utf8).write(to: blob)
            var form = MultipartFormData(boundary: "B")
            form.append(photo, name: "photo")
            form.append(blob, name: "blob", fileName: "renamed.bin", mimeType: "application/x-custom")
            form.append(blob, name: "plain")
            let body = text(try form.encodedData())
            #expect(
                body.contains(
                    "name=\"photo\"; filename=\"Photo.JPG\"\r\nContent-Type: image/jpeg\r\n\r\njpg\r\n"))
            #expect(
                body.contains(
                    "name=\"blob\"; filename=\"renamed.bin\"\r\nContent-Type: application/x-custom\r\n\r\nbin\r\n"))
            #expect(
                body.contains(
                    "name=\"plain\"; filename=\"blob.weird\"\r\nContent-Type: application/octet-stream\r\n\r\nbin\r\n"))
        }
    }

    @Test(arguments: [
        ("json", "application/json"), ("txt", "text/plain"), ("html", "text/html"), ("jpeg", "image/jpeg"),
        ("png", "image/png"), ("gif", "image/gif"), ("pdf", "application/pdf"), ("zip", "application/zip"),
        ("mp4", "video/mp4"), ("csv", "text/csv"), ("xml", "application/xml"), ("", "application/octet-stream"),
        ("PNG", "image/png"),
    ])
    func mimeTypeTable(pathExtension: String, mimeType: String) {
        #expect(MultipartFormData.mimeType(forExtension: pathExtension) == mimeType)
    }

    @Test func contentLengthCountsFilePartsWithoutReadingThem() throws {
        try withTemporaryDirectory { directory in
            let file = directory.appendingPathComponent("data.csv")
            try Data(repeating: 7, count: 12_345).write(to: file)
            var form = MultipartFormData()
            form.append("value", name: "field")
            form.append(file, name: "upload")
            form.append(Data(count: 99), name: "bytes", fileName: "b.bin")
            #expect(try form.contentLength() == Int64(try form.encodedData().count))
        }
    }

    @Test func writeToFileEqualsEncodedDataAndIsOwnerOnly() throws {
        try withTemporaryDirectory { directory in
            let file = directory.appendingPathComponent("image.png")
            try Data((0..<3000).map { UInt8($0 % 251) }).write(to: file)
            var form = MultipartFormData()
            form.append("x", name: "a")
            form.append(file, name: "image")
            form.append(Data(repeating: 1, count: 2 << 20), name: "big", fileName: "big.bin")
            form.append(file, name: "again", fileName: "again.png")
            let output = directory.appendingPathComponent("body")
            // An existing file is replaced, and loses its looser mode.
            try Data("old".utf8).write(to: output)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: output.path)
            let written = try form.write(to: output)
            let encoded = try form.encodedData()
            #expect(try Data(contentsOf: output) == encoded)
            #expect(written == Int64(encoded.count))
            #expect(written == (try form.contentLength()))
            #expect(permissions(of: output) == 0o600)
        }
    }

    @Test func largeFilePartIsStreamedIntact() throws {
        try withTemporaryDirectory { directory in
            let chunk = TestServer.downloadContent(size: 1 << 20, version: 1, range: 0..<(1 << 20))
            let file = directory.appendingPathComponent("movie.mp4")
            #expect(FileManager.default.createFile(atPath: file.path, contents: nil))
            let input = try FileHandle(forWritingTo: file)
            for index in 0..<64 {
                var block = chunk
                block[0] = UInt8(index)  // every MiB differs, so a misplaced chunk shows
                try input.write(contentsOf: block)
            }
            try input.close()

            var form = MultipartFormData(boundary: "B")
            form.append("before", name: "a")
            form.append(file, name: "movie")
            form.append("after", name: "z")
            let output = directory.appendingPathComponent("body")
            let written = try form.write(to: output)
            #expect(written == (try form.contentLength()))
            let size = try FileManager.default.attributesOfItem(atPath: output.path)[.size] as? NSNumber
            #expect(size?.int64Value == written)

            let prefix =
                "--B\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nbefore\r\n"
                + "--B\r\nContent-Disposition: form-data; name=\"movie\"; filename=\"movie.mp4\"\r\n"
                + "Content-Type: video/mp4\r\n\r\n"
            let suffix = "\r\n--B\r\nContent-Disposition: form-data; name=\"z\"\r\n\r\nafter\r\n--B--\r\n"
            #expect(written == Int64(prefix.utf8.count + suffix.utf8.count + 64 << 20))

            let body = try FileHandle(forReadingFrom: output)
            defer { try? body.close() }
            let source = try FileHandle(forReadingFrom: file)
            defer { try? source.close() }
            #expect(try body.read(upToCount: prefix.utf8.count) == Data(prefix.utf8))
            for offset in [0, 1, 4095, 1 << 20, (1 << 20) + 262_143, 33 << 20, (64 << 20) - 4096] {
                try body.seek(toOffset: UInt64(prefix.utf8.count + offset))
                try source.seek(toOffset: UInt64(offset))
                #expect(try body.read(upToCount: 4096) == source.read(upToCount: 4096), "at file offset \(offset)")
            }
            try body.seek(toOffset: UInt64(written) - UInt64(suffix.utf8.count))
            #expect(try body.readToEnd() == Data(suffix.utf8))
        }
    }

    @Test func missingFileFailsWithItsPathAndLeavesNoOutput() throws {
        try withTemporaryDirectory { directory in
            let missing = directory.appendingPathComponent("missing.pdf")
            var form = MultipartFormData()
            form.append("x", name: "a")
            form.append(missing, name: "doc")
            let expected = ErrandError.fileSystem(
                "multipart part \"doc\": cannot read file at \(missing.path): no such file")
            #expect(throws: expected) { try form.contentLength() }
            #expect(throws: expected) { try form.encodedData() }
            let output = directory.appendingPathComponent("body")
            #expect(throws: expected) { try form.write(to: output) }
            #expect(!FileManager.default.fileExists(atPath: output.path))

            var directoryPart = MultipartFormData()
            directoryPart.append(directory, name: "dir")
            #expect(
                throws: ErrandError.fileSystem(
                    "multipart part \"dir\": cannot read file at \(directory.path): it is a directory")
            ) { try directoryPart.contentLength() }
        }
    }

    @Test func unwritableOutputFails() {
        var form = MultipartFormData()
        form.append("x", name: "a")
        let output = URL(fileURLWithPath: "/nonexistent-errand-directory/body")
        #expect {
            try form.write(to: output)
        } throws: { error in
            guard case .fileSystem(let reason) = error as? ErrandError else { return false }
            return reason.hasPrefix("multipart body: cannot create /nonexistent-errand-directory/body: ")
        }
    }

    @Test func namesAndFileNamesAreEscapedAsBrowsersDo() throws {
        var form = MultipartFormData(boundary: "B")
        form.append(
            Data("1".utf8), name: "a\"b\r\nc", fileName: "evil\".txt\r\nX-Injected: 1", mimeType: "text/a\r\nX: y")
        form.append("2", name: "naïve ✓")
        let body = text(try form.encodedData())
        #expect(
            body.contains(
                "Content-Disposition: form-data; name=\"a%22b%0D%0Ac\"; filename=\"evil%22.txt%0D%0AX-Injected: 1\"\r\n"
                    + "Content-Type: text/a%0D%0AX: y\r\n\r\n1\r\n"))
        #expect(body.contains("name=\"naïve ✓\"\r\n\r\n2\r\n"))
        #expect(!body.contains("\r\nX-Injected"))
        #expect(try form.contentLength() == Int64(try form.encodedData().count))
    }

    @Test func argumentsBecomeFieldsBeforeTheClosureParts() throws {
        let arguments: [String: any Sendable] = [
            "b": 2, "a": "x y", "flag": true, "nothing": NSNull(), "ids": [1, 2.5] as [any Sendable],
            "user": ["name": "n", "admin": false] as [String: any Sendable],
        ]
        let form = try MultipartFormData.build(arguments: arguments) { form in
            form.append(Data("f".utf8), name: "file", fileName: "f.txt")
        }
        func field(_ name: String, _ value: String) -> String {
            "--\(form.boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n"
        }
        let expected =
            field("a", "x y") + field("b", "2") + field("flag", "1") + field("ids[]", "1") + field("ids[]", "2.5")
            + field("nothing", "") + field("user[admin]", "0") + field("user[name]", "n")
            + "--\(form.boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f.txt\"\r\n"
            + "Content-Type: text/plain\r\n\r\nf\r\n--\(form.boundary)--\r\n"
        #expect(text(try form.encodedData()) == expected)

        #expect(
            text(try MultipartFormData.build(arguments: nil, constructingBody: nil).encodedData()).hasSuffix("--\r\n"))
    }

    @Test func unencodableArgumentsFailLikeTheFormEncoder() {
        struct Opaque: Sendable {}
        #expect(throws: ErrandError.serialization("arguments.bad has a value of unsupported type Opaque")) {
            try MultipartFormData.build(arguments: ["bad": Opaque()], constructingBody: nil)
        }
    }

    func permissions(of url: URL) -> Int? {
        let attributes = try? FileManager.default.attributesOfItem(atPath: url.path)
        return (attributes?[.posixPermissions] as? NSNumber)?.intValue
    }
}
