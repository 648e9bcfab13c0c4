// RecordAndReplay: record a session against a server into an HTTP Archive, then replay it
// offline — the way to test an API layer against the real API without calling it every run.
//
//     swift run RecordAndReplay                         # records against the embedded loopback server
//     swift run RecordAndReplay --har session.har       # keeps the recording (open it in a browser's network panel)
//     swift run RecordAndReplay --base-url http://host:80  # records against any httpbin-compatible server
//
// A `HARRecorder` added to `NetworkConfig.shared` records every exchange, masking the bearer
// token and the password before anything is kept. The server is then stopped, and an agent on a
// `ReplayTransport` answers the same calls from the file: same statuses, same bodies, no network.

import Errand
import ErrandTestServer
import Foundation

/// `POST /auth/login` with a form; the server answers with tokens.
struct LoginApi: BaseRequest {
    var url: String { "/auth/login" }
    var method: HTTPMethod { .post }
    var arguments: [String: any Sendable]? { ["username": "ann", "password": "s3cret"] }
    var jsonValidator: JSONValidator? { ["access_token": .string] }
}

/// `GET /auth/protected/profile` with the bearer token from the login.
struct ProfileApi: BaseRequest {
    let token: String

    var url: String { "/auth/protected/profile" }
    var arguments: [String: any Sendable]? { ["fields": "name,email"] }
    var headers: [String: String] { ["Authorization": "Bearer \(token)"] }
    var jsonValidator: JSONValidator? { ["authenticated": .bool] }
}

/// `GET /auth/protected/settings`: a call the recorded session never made.
struct SettingsApi: BaseRequest {
    var url: String { "/auth/protected/settings" }
}

/// `GET /status/404`, accepted: a recording keeps failures as they were too.
struct MissingPageApi: BaseRequest {
    var url: String { "/status/404" }
    var responseSerializerType: ResponseSerializerType { .data }
    func statusCodeValidator(_ code: Int) -> Bool { code == 404 }
}

@main
enum RecordAndReplay {
    static func main() async {
        do {
            try await run(arguments: Array(CommandLine.arguments.dropFirst()))
        } catch {
            print("RecordAndReplay failed: \(error)")
            exit(1)
        }
    }

    static func run(arguments: [String]) async throws {
        let har = harFile(arguments)
        let server = try ExampleServer(arguments: arguments.filter { $0 != "--har" && $0 != har.path })
        NetworkConfig.shared.baseUrl = server.baseURL

        // 1. Record: the password and the tokens are masked before anything is kept.
        print("Recording against \(server.baseURL)…")
        let recorder = HARRecorder(
            redaction: .default.adding(jsonFields: ["password", "access_token", "refresh_token"]))
        NetworkConfig.shared.addEventMonitor(recorder)
        let recorded = try await session(on: .shared)
        // Every request that returned is in the file, though monitors hear of it just after.
        try recorder.write(to: har)
        NetworkConfig.shared.clearEventMonitors()
        server.stop()
        let text = try String(contentsOf: har, encoding: .utf8)
        print("Wrote \(recorder.entryCount) entries, \(text.utf8.count) bytes, to \(har.path).")
        print(
            "  The password appears in it: \(text.contains("s3cret")); the token: \(text.contains(recorded[0].token)).")
        print("The server is stopped.\n")

        // 2. Replay the same session from the file. The login now answers with the masked token,
        // which the profile call sends: a replay compares methods and URLs, never headers.
        print("Replaying from \(har.lastPathComponent)…")
        let offline = NetworkAgent(config: .shared, transport: try ReplayTransport(har: har))
        let replayed = try await session(on: offline)
        for (live, replay) in zip(recorded, replayed) where live.response.statusCode != replay.response.statusCode {
            throw ErrandError.statusCode(replay.response.statusCode)
        }
        print("  Every call got the status it was recorded with.")

        // 3. A call the recording does not hold fails, saying so.
        do {
            _ = try await offline.response(SettingsApi())
        } catch {
            print("  An unrecorded call fails: \(error)")
        }
        if !arguments.contains("--har") { try? FileManager.default.removeItem(at: har) }
        print("\nDone: recorded once, replayed offline.")
    }

    /// Logs in, reads the profile with the token, opens a missing page; prints each answer.
    static func session(on agent: NetworkAgent) async throws -> [(response: Response, token: String)] {
        let login = try await agent.response(LoginApi())
        let token = (login.jsonObject as? [String: Any])?["access_token"] as? String ?? ""
        print("  log in: \(summary(login))")
        let profile = try await agent.response(ProfileApi(token: token))
        print("  read the profile: \(summary(profile))")
        let missing = try await agent.response(MissingPageApi())
        print("  open a missing page: \(summary(missing))")
        return [(login, token), (profile, token), (missing, token)]
    }

    /// `--har <path>`, or a file in the temporary directory.
    static func harFile(_ arguments: [String]) -> URL {
        if let flag = arguments.firstIndex(of: "--har"), flag + 1 < arguments.count {
            return URL(fileURLWithPath: arguments[flag + 1])
        }
        return FileManager.default.temporaryDirectory.appendingPathComponent("record-and-replay-\(UUID()).har")
    }

    static func summary(_ response: Response) -> String {
        let body = String(decoding: response.data.prefix(60), as: UTF8.self)
            .replacingOccurrences(of: "\n", with: " ")
            .replacingOccurrences(of: "  ", with: "")
        return "\(response.statusCode), \(response.data.count) bytes\(body.isEmpty ? "" : ": \(body)…")"
    }
}
