import Errand
import ErrandScenarios
import ErrandTestServer
import Foundation
import Testing

/// Multipart forms, file and data bodies, and upload progress, over HTTP to the loopback server.
@Suite("Uploads")
struct UploadTests {
    @Test func aMultipartFormWithTwoFilesAndFieldsIsEchoedExactly() async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let notes = fixture.directory.appendingPathComponent("notes.txt")
        try Data("first line\nsecond line ✓\n".utf8).write(to: notes)
        let request = UploadRequest(
            url: "/post", arguments: ["title": "Holiday", "tags": ["sea", "sun"]],
            constructingBody: { form in
                form.append(notes, name: "notes")
                form.append(Data(#"{"a":1}"#.utf8), name: "meta", fileName: "meta.json")
                form.append("ann", name: "author")
            })
        let response = try await fixture.makeAgent().response(request)
        let echo = response.object
        let form = try #require(echo["form"] as? [String: Any])
        #expect(form["title"] as? String == "Holiday")
        #expect(form["tags[]"] as? [String] == ["sea", "sun"])
        #expect(form["author"] as? String == "ann")
        #expect(form.count == 3)
        #expect(echo["files"] as? [String: String] == ["notes": "first line\nsecond line ✓\n", "meta": #"{"a":1}"#])
        let contentType = (echo["headers"] as? [String: String])?["Content-Type"] ?? ""
        #expect(contentType.hasPrefix("multipart/form-data; boundary="))
    }

    @Test func aLargeMultipartBodyGoesThroughATemporaryFileThatIsRemoved() async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let big = fixture.directory.appendingPathComponent("big.txt")
        let text = String(repeating: "0123456789abcdef", count: (3 << 20) / 16)
        try Data(text.utf8).write(to: big)
        let before = Self.temporaryUploadFiles()
        let progress = ProgressLog()
        let request = UploadRequest(
            url: "/post", arguments: ["kind": "log"], constructingBody: { $0.append(big, name: "log") },
            uploadProgress: { progress.append($0) })
        let agent = fixture.makeAgent()
        let response = try await agent.response(request)
        #expect((response.object["files"] as? [String: String])?["log"] == text)
        #expect((response.object["form"] as? [String: String]) == ["kind": "log"])
        // Other tests' uploads come and go in the same folder meanwhile: wait for them too.
        try await eventually { Self.temporaryUploadFiles().subtracting(before).isEmpty }
        await TransferFixture.callbacksDelivered(on: agent)
        let last = try #require(progress.values.last)
        #expect(last.completedBytes == last.totalBytes)
        #expect(last.completedBytes > 3 << 20)
    }

    @Test func a64MiBFileIsStreamedFromDiskWithProgress() async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let size = 64 << 20
        let file = fixture.directory.appendingPathComponent("upload.bin")
        let expected = try await onOwnThread { () throws -> Checksum in
            guard FileManager.default.createFile(atPath: file.path, contents: nil) else {
                throw CocoaError(.fileWriteUnknown)
            }
            let handle = try FileHandle(forWritingTo: file)
            defer { try? handle.close() }
            var checksum = Checksum()
            for offset in stride(from: 0, to: size, by: 4 << 20) {
                let chunk = TestServer.downloadContent(size: size, version: 7, range: offset..<offset + (4 << 20))
                try handle.write(contentsOf: chunk)
                checksum.update(chunk)
            }
            return checksum
        }

        let progress = ProgressLog()
        let agent = fixture.makeAgent()
        let task = agent.start(
            UploadRequest(
                url: "/upload", method: .put, uploadBody: .file(file), uploadProgress: { progress.append($0) }))
        var streamed: [TransferProgress] = []
        for await value in task.uploadProgress { streamed.append(value) }
        let response = try await task.value
        #expect(response.object["bytes"] as? Int == size)
        #expect(response.object["checksum"] as? String == expected.hexDigits)
        #expect(response.object["content_type"] as? String == "application/octet-stream")
        await TransferFixture.callbacksDelivered(on: agent)
        #expect(progress.isMonotonic)
        #expect(progress.values.last == TransferProgress(completedBytes: Int64(size), totalBytes: Int64(size)))
        #expect(streamed.last == TransferProgress(completedBytes: Int64(size), totalBytes: Int64(size)))
        #expect(zip(streamed, streamed.dropFirst()).allSatisfy { $0.completedBytes <= $1.completedBytes })
    }

    @Test func aDataBodyIsSentAsItIsWithArgumentsInTheQuery() async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let request = UploadRequest(
            url: "/post", arguments: ["name": "a b"], headers: ["Content-Type": "text/plain"],
            uploadBody: .data(Data("raw body ✓".utf8)))
        let echo = try await fixture.makeAgent().response(request).object
        #expect(echo["data"] as? String == "raw body ✓")
        #expect(echo["args"] as? [String: String] == ["name": "a b"])
        #expect((echo["headers"] as? [String: String])?["Content-Type"] == "text/plain")
    }

    /// A part of a larger buffer keeps the parent's indices: sending it must not read from 0.
    @Test func aSliceOfDataIsSentAsTheSliceIs() async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let big = Data((0..<100_000).map { UInt8(ascii: "a") + UInt8($0 % 26) })
        let part = big[50_000..<50_100]
        let echo = try await fixture.makeAgent().response(
            UploadRequest(url: "/post", headers: ["Content-Type": "text/plain"], uploadBody: .data(part))
        ).object
        #expect(echo["data"] as? String == String(decoding: part, as: UTF8.self))
    }

    /// An interceptor that sends the rest of a body, as a resumed upload does.
    struct DroppingFirstBytes: RequestInterceptor {
        func adapt(_ request: TransportRequest, for task: RequestTask) async throws(ErrandError) -> TransportRequest {
            var request = request
            request.body = request.body?.dropFirst(8)
            return request
        }
    }

    @Test func aBodyAnInterceptorShortenedWithDropFirstIsSentWhole() async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent()
        agent.config.addInterceptor(DroppingFirstBytes())
        let echo = try await agent.response(
            UploadRequest(
                url: "/post", headers: ["Content-Type": "text/plain"],
                uploadBody: .data(Data("skipped the rest ✓".utf8)))
        ).object
        #expect(echo["data"] as? String == "the rest ✓")
    }

    @Test func aMissingFileFailsBeforeAnythingIsSent() async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let missing = fixture.directory.appendingPathComponent("nope.bin")
        let agent = fixture.makeAgent()
        for request in [
            UploadRequest(url: "/upload", uploadBody: .file(missing)),
            UploadRequest(url: "/post", constructingBody: { $0.append(missing, name: "file") }),
        ] {
            let task = await agent.finishedTask(request)
            guard case .fileSystem(let reason) = task.error else {
                Issue.record("expected a file system error, got \(String(describing: task.error))")
                continue
            }
            #expect(reason.contains(missing.path))
            #expect(reason.contains("no such file"))
        }
        #expect(fixture.server.receivedRequests().isEmpty)
    }

    private static func temporaryUploadFiles() -> Set<String> {
        let names =
            (try? FileManager.default.contentsOfDirectory(atPath: FileManager.default.temporaryDirectory.path)) ?? []
        return Set(names.filter { $0.hasPrefix("errand-upload-") })
    }
}
