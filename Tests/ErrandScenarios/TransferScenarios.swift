import Errand
import Foundation
import Testing

extension Scenario {
    /// Downloads and uploads, against httpbin's `/range` and multipart `/post`.
    static let transfers: [Scenario] = [
        Scenario("A cancelled download resumes with a Range request to a byte-identical file") { server in
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("errand-scenario-\(UUID().uuidString)", isDirectory: true)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let size = 102_400
            // Streamed over two seconds, so that the cancel lands mid-body however busy the machine.
            var request = HTTPBinRequest("/range/\(size)", arguments: ["duration": 2, "chunk_size": 1024])
            request.responseSerializerType = .data
            request.resumableDownloadPath = directory.path
            let trigger = CancelTrigger(atBytes: 10_000)
            request.resumableDownloadProgress = { trigger.observe($0) }
            let agent = server.makeAgent()
            let first = agent.start(request)
            trigger.task = first
            _ = try? await first.value
            #expect(first.error == .cancelled)
            let partial = directory.appendingPathComponent("\(size).errand-partial").path
            let kept = (try? FileManager.default.attributesOfItem(atPath: partial)[.size] as? NSNumber)?.intValue ?? 0
            #expect((10_000...size).contains(kept), "the cancelled attempt keeps what it received")

            request.resumableDownloadProgress = nil
            let resumed = try await agent.response(request)
            #expect(
                resumed.statusCode == 206,
                "the second attempt asked for the rest only; kept \(kept), answered \(resumed.headers)")
            let file = try #require(resumed.fileURL)
            #expect(file.lastPathComponent == "\(size)")
            let alphabet = Array("abcdefghijklmnopqrstuvwxyz".utf8)
            #expect(try Data(contentsOf: file) == Data((0..<size).map { alphabet[$0 % 26] }))
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            #expect(leftovers == ["\(size)"])
        },
        Scenario("An upload sent in one piece tells its progress closure it is complete") { server in
            let log = ProgressLog()
            var request = HTTPBinRequest("/put", method: .put)
            request.uploadBody = .data(Data(repeating: UInt8(ascii: "e"), count: 57_000))
            request.uploadProgress = { log.append($0) }
            let agent = server.makeAgent()
            _ = try await agent.response(request)
            // Progress calls are queued on the callback queue; the response is not ordered with them.
            await withCheckedContinuation { done in agent.config.callbackQueue.async { done.resume() } }
            #expect(log.values.last == TransferProgress(completedBytes: 57_000, totalBytes: 57_000))
        },
        Scenario("A multipart form with two files and fields is echoed exactly") { server in
            var request = HTTPBinRequest("/post", method: .post, arguments: ["title": "Holiday", "year": 2026])
            request.constructingBody = { form in
                form.append(Data("beach ✓\n".utf8), name: "photo", fileName: "beach.txt", mimeType: "text/plain")
                form.append(Data(#"{"a":[1,2]}"#.utf8), name: "meta", fileName: "meta.json")
                form.append("ann", name: "author")
            }
            let echo = try await server.makeAgent().response(request).object
            #expect(echo["form"] as? [String: String] == ["title": "Holiday", "year": "2026", "author": "ann"])
            #expect(echo["files"] as? [String: String] == ["photo": "beach ✓\n", "meta": #"{"a":[1,2]}"#])
        },
        Scenario("A file body is uploaded with its length and echoed") { server in
            let file = FileManager.default.temporaryDirectory.appendingPathComponent(
                "errand-scenario-\(UUID().uuidString).txt")
            try Data("line one\nline two\n".utf8).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            var request = HTTPBinRequest("/put", method: .put, arguments: ["v": 1])
            request.uploadBody = .file(file)
            request.headers = ["Content-Type": "text/plain"]
            let echo = try await server.makeAgent().response(request).object
            #expect(echo["data"] as? String == "line one\nline two\n")
            #expect(echo["args"] as? [String: String] == ["v": "1"])
            #expect((echo["headers"] as? [String: String])?["Content-Length"] == "18")
        },
    ]
}
