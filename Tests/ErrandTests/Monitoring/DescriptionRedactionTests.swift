import Foundation
import Testing

@testable import Errand

@Suite("Task descriptions and debug log lines redact credentials")
struct DescriptionRedactionTests {
    struct Login: BaseRequest {
        var url: String { "/login" }
        var method: HTTPMethod { .post }
        var arguments: [String: any Sendable]? { ["user": "ann", "password": "hunter2", "remember": true] }
        var headers: [String: String] { ["Cookie": "sid=abc123", "X-Trace": "t-1"] }
        var authorization: (username: String, password: String)? { ("ann", "hunter2") }
    }

    struct Search: BaseRequest {
        var url: String { "/search" }
        var arguments: [String: any Sendable]? { ["q": "o'neil", "access_token": "tok-999", "page": 2] }
    }

    func finishedTask(_ request: any BaseRequest, respond: Bool = true) async -> (RequestTask, ManualTransport) {
        let transport = ManualTransport()
        let agent = NetworkAgent.testing(transport, baseUrl: "https://api.example.com")
        let callback = Callback()
        let task = agent.start(
            request, success: { callback.record($0, succeeded: true) },
            failure: { callback.record($0, succeeded: false) })
        if respond {
            transport.sent[0].respond(status: 200, body: #"{"ok":true}"#)
            _ = await callback.outcome()
        }
        return (task, transport)
    }

    @Test func descriptionShowsRequestAndCurlWithoutSecrets() async {
        let (task, _) = await finishedTask(Login())
        let text = task.description
        #expect(text.contains("POST https://api.example.com/login → 200"))
        #expect(text.contains("X-Trace: t-1"))
        #expect(text.contains("curl -X POST 'https://api.example.com/login'"))
        #expect(text.contains("password=<redacted>"))
        #expect(text.contains("user=ann"))
        #expect(text.contains("Authorization: <redacted>"))
        #expect(text.contains("Cookie: <redacted>"))
        for secret in ["hunter2", "abc123", Data("ann:hunter2".utf8).base64EncodedString()] {
            #expect(!text.contains(secret), "leaked \(secret)")
        }
    }

    @Test func curlQuotesForTheShell() async {
        let (task, _) = await finishedTask(Search(), respond: false)
        let curl = task.description.split(separator: "\n").last.map(String.init) ?? ""
        let userAgent = UserAgent.value(appVersion: "")
        #expect(
            curl
                == "curl -X GET 'https://api.example.com/search?access_token=<redacted>&page=2&q=o%27neil'"
                + " -H 'User-Agent: \(userAgent)'")
    }

    @Test func debugLogLineNamesMethodURLStatusDurationAndBytes() async {
        let (task, _) = await finishedTask(Search())
        let line = DebugLog.line(for: task)
        #expect(
            line.hasPrefix(
                "[Errand] GET https://api.example.com/search?access_token=<redacted>&page=2&q=o%27neil → 200, "))
        #expect(line.hasSuffix(" ms, 11 bytes"))
        #expect(!line.contains("tok-999"))
    }

    @Test func aTransportErrorsURLIsMaskedInTheDebugLogLine() async throws {
        let (task, transport) = await finishedTask(Search(), respond: false)
        let sent = try #require(transport.sent.first)
        let failure = URLError(.cannotConnectToHost, userInfo: [NSURLErrorFailingURLErrorKey: sent.request.url])
        sent.events(.completed(.transport(failure)))
        _ = try? await task.value
        let description = try #require(task.error).description
        #expect(description.hasSuffix(" for https://api.example.com/search?access_token=<redacted>&page=2&q=o%27neil"))
        #expect(!description.contains("tok-999"), "the error names the URL, masked")
        let line = DebugLog.line(for: task)
        #expect(line.contains("failed: Could not connect to the server") && line.contains("access_token=<redacted>"))
        #expect(!line.contains("tok-999"))
    }

    @Test func redactorKnowsTokenLikeNames() {
        for name in [
            "token", "access_token", "Authorization", "Cookie", "Set-Cookie", "password", "client_secret", "X-Api-Key",
            "sessionid",
        ] {
            #expect(Redactor.isSensitive(name), "\(name)")
        }
        for name in ["user", "page", "q", "Content-Type", "Accept"] {
            #expect(!Redactor.isSensitive(name), "\(name)")
        }
    }

    /// Argument names need not be ASCII: one that lowercases to a marked part is marked.
    @Test func aNameThatLowercasesToAMarkedPartIsSensitive() {
        // U+212A KELVIN SIGN lowercases to an ASCII `k`.
        for name in ["to\u{212A}en", "Пароль_password", "APIKEY", "x-Private", "my_pwd", "päss_Secret"] {
            #expect(Redactor.isSensitive(name), "\(name)")
        }
        for name in ["", "p", "pw", "tokn", "Ключ", "séssion", "pass word"] {
            #expect(!Redactor.isSensitive(name), "\(name)")
        }
    }

    @Test func jsonBodiesAreRedactedByKey() {
        let body = Data(#"{"user":"ann","auth":{"refresh_token":"r"},"list":[{"password":"p"}]}"#.utf8)
        let text = Redactor.body(body, contentType: "application/json")
        #expect(text == #"{"auth":"<redacted>","list":[{"password":"<redacted>"}],"user":"ann"}"#)
    }
}
