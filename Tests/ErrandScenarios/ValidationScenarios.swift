import Errand
import Foundation
import Testing

extension Scenario {
    /// The status code is judged before the body is parsed, and requests say who sends them.
    static let validation: [Scenario] = [
        Scenario("a 418 with a text body fails with its status code, the body kept on the task") { server in
            let task = await server.makeAgent().finishedTask(HTTPBinRequest("/status/418"))
            #expect(task.error == .statusCode(418))
            #expect(task.responseStatusCode == 418)
            #expect(task.responseString?.contains("teapot") == true)
        },
        Scenario("an HTML 404 fails with its status code, not as a body that is not JSON") { server in
            let task = await server.makeAgent().finishedTask(HTTPBinRequest("/no-such-endpoint"))
            #expect(task.error == .statusCode(404))
            #expect(task.response?.value(forHeader: "Content-Type")?.hasPrefix("text/html") == true)
            #expect(task.responseString?.contains("Not Found") == true)
        },
        Scenario("a downloaded body is never parsed, and a download's 404 is its status code") { server in
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("errand-scenario-\(UUID().uuidString)", isDirectory: true)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let agent = server.makeAgent()
            // Random bytes with the default JSON response serializer: fine, because they go to a file.
            var bytes = HTTPBinRequest("/bytes/4096", arguments: ["seed": 11])
            bytes.resumableDownloadPath = directory.appendingPathComponent("bytes.bin").path
            let downloaded = try await agent.response(bytes)
            #expect(try Data(contentsOf: try #require(downloaded.fileURL)).count == 4096)

            var missing = HTTPBinRequest("/status/404")
            missing.resumableDownloadPath = directory.appendingPathComponent("missing.bin").path
            let task = await agent.finishedTask(missing)
            #expect(task.error == .statusCode(404))
            #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("missing.bin").path))
        },
        Scenario("requests carry Errand's User-Agent unless they name their own") { server in
            let agent = server.makeAgent()
            let echoed = try await agent.response(HTTPBinRequest("/headers"))
            let sent = (echoed.object["headers"] as? [String: String])?["User-Agent"] ?? ""
            #expect(sent.hasPrefix(ProcessInfo.processInfo.processName), "\(sent)")
            #expect(sent.hasSuffix(" Errand/0.1.0"), "\(sent)")

            var named = HTTPBinRequest("/headers")
            named.headers = ["user-agent": "Shop/2.0"]
            let own = try await agent.response(named)
            #expect((own.object["headers"] as? [String: String])?["User-Agent"] == "Shop/2.0")
        },
    ]
}
