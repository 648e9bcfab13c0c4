import ErrandScenarios
import ErrandTestServer
import Foundation
import Testing

@testable import Errand

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A transport error reads the same whichever transport failed: what happened, in words, the
/// code and the transport's own account, and the URL, its credentials masked —
/// `The network connection was lost (URLError -1005: Recv failure: Connection reset by peer) for
/// http://127.0.0.1:8080/get?access_token=<redacted>` — never Foundation's "The operation could
/// not be completed", and never without the URL.
@Suite("Transport error descriptions")
struct TransportErrorDescriptionTests {
    struct Get: BaseRequest {
        var url: String
        var timeoutInterval: TimeInterval = 30
    }

    /// The two transports a user picks from; the poll loop's errors are CurlTransport's.
    static let transports: [TransportKind] = [.curl, .urlSession]

    /// `description` in the one form: `<words> (URLError <code>…) for <url>`.
    static func expectOneForm(
        _ error: ErrandError?, words: String, code: URLError.Code, url: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let text = error?.description ?? "no error"
        #expect(
            text.hasPrefix("\(words) (URLError \(code.rawValue)"), "\(text)", sourceLocation: sourceLocation)
        #expect(text.hasSuffix(") for \(url)"), "\(text)", sourceLocation: sourceLocation)
        #expect(!text.contains("s3cret"), "\(text)", sourceLocation: sourceLocation)
        #expect(
            !text.contains("The operation could not be completed"), "\(text)", sourceLocation: sourceLocation)
    }

    @Test(arguments: transports)
    func aRefusedConnectionSaysSoAndNamesTheURL(kind: TransportKind) async throws {
        let server = try TestServer()
        let base = server.baseURL
        server.stop()  // Nothing listens on its port any more.
        let agent = NetworkAgent.testing(kind.make(), baseUrl: base)
        let task = await agent.finishedTask(Get(url: "/get?access_token=s3cret"))
        Self.expectOneForm(
            task.error, words: "Could not connect to the server", code: .cannotConnectToHost,
            url: "\(base)/get?access_token=<redacted>")
    }

    @Test(arguments: transports)
    func aResetSaysTheConnectionWasLostAndNamesTheURL(kind: TransportKind) async throws {
        let server = try TestServer()
        defer { server.stop() }
        let agent = NetworkAgent.testing(kind.make(), baseUrl: server.baseURL)
        let task = await agent.finishedTask(Get(url: "/fault/reset?access_token=s3cret"))
        Self.expectOneForm(
            task.error, words: "The network connection was lost", code: .networkConnectionLost,
            url: "\(server.baseURL)/fault/reset?access_token=<redacted>")
    }

    /// A timeout is its own case, without a payload (callers compare it with `== .timedOut`), and
    /// reads the same under both transports; the debug log line and the task's description name its URL.
    @Test(arguments: transports)
    func aTimeoutReadsTheSameUnderEitherTransport(kind: TransportKind) async throws {
        let silent = try SilentListener()
        let agent = NetworkAgent.testing(kind.make(), baseUrl: "http://127.0.0.1:\(silent.port)")
        let task = await agent.finishedTask(Get(url: "/get?access_token=s3cret", timeoutInterval: 1))
        #expect(task.error == .timedOut)
        #expect(task.error?.description == "The request timed out")
        #expect(
            DebugLog.line(for: task).contains(
                "/get?access_token=<redacted> → no response, failed: The request timed out"))
    }

    /// Errors a transport makes before anything is sent — an option it cannot honour — name the
    /// URL too, as its network errors do.
    @Test(arguments: transports)
    func aRefusalBeforeSendingNamesTheURL(kind: TransportKind) async throws {
        var connection = ConnectionOptions()
        let words: String
        let code: URLError.Code
        let transport: any Transport
        switch kind {
        case .urlSession:
            connection.hostOverrides = ["api.example.com:443": "127.0.0.1"]  // A session cannot.
            (words, code) = ("The request cannot be sent", .unsupportedURL)
            transport = URLSessionTransport(configuration: .default, connection: connection)
        default:
            connection.trustedRoots = .only([])  // Would trust no server.
            (words, code) = ("The secure connection failed", .secureConnectionFailed)
            transport = CurlTransport(configuration: .default, connection: connection)
        }
        let agent = NetworkAgent.testing(transport, baseUrl: "https://api.example.com")
        let task = await agent.finishedTask(Get(url: "/items?token=s3cret"))
        Self.expectOneForm(task.error, words: words, code: code, url: "https://api.example.com/items?token=<redacted>")
    }

    /// The URL an error names is masked as the debug log masks the request's: a token as the
    /// URL's user, a presigned URL's signature and session token (`X-Amz-Signature`,
    /// `X-Amz-Security-Token`) — neither in the description nor in the log line that quotes it.
    @Test(arguments: transports)
    func theURLAnErrorNamesHoldsNoSecret(kind: TransportKind) async throws {
        let server = try TestServer()
        let port = server.port
        server.stop()  // Nothing listens on its port any more.
        let agent = NetworkAgent.testing(kind.make())
        let url =
            "http://ghp_s3cret@127.0.0.1:\(port)/object?X-Amz-Credential=AKIAs3cret"
            + "&X-Amz-Security-Token=s3cret-session&X-Amz-Signature=s3cret-signature&part=1"
        let task = await agent.finishedTask(Get(url: url))
        let text = task.error?.description ?? "no error"
        #expect(text.hasPrefix("Could not connect to the server"), "\(text)")
        #expect(text.contains("127.0.0.1:\(port)/object?"), "\(text)")
        #expect(!text.contains("s3cret"), "\(text)")
        let line = DebugLog.line(for: task)
        #expect(!line.contains("s3cret"), "\(line)")
    }

    /// What a stub throws arrives as thrown, so a test can compare it whole.
    @Test func aStubsErrorArrivesAsThrown() async {
        let thrown = ErrandError.transport(URLError(.notConnectedToInternet))
        let agent = NetworkAgent.testing(StubTransport { _ throws(ErrandError) in throw thrown })
        let task = await agent.finishedTask(Get(url: "/items"))
        #expect(task.error == thrown)
        #expect(task.error?.description == "There is no network connection (URLError -1009)")
    }

    @Test func theTransportsOwnAccountFollowsTheCodeAndFoundationsPlaceholderIsLeftOut() {
        let url = URL(string: "ws://chat.example.com/room")!
        let curl = URLError(
            .networkConnectionLost,
            userInfo: [NSURLErrorFailingURLErrorKey: url, NSLocalizedDescriptionKey: "Failed sending data to the peer"])
        #expect(
            ErrandError.transport(curl).description
                == "The network connection was lost (URLError -1005: Failed sending data to the peer) for ws://chat.example.com/room"
        )
        // Foundation's older key, NSURLErrorFailingURLStringErrorKey, holds the URL as text.
        let foundation = URLError(.networkConnectionLost, userInfo: ["NSErrorFailingURLStringKey": url.absoluteString])
        #expect(
            ErrandError.transport(foundation).description
                == "The network connection was lost (URLError -1005) for ws://chat.example.com/room")
        #expect(
            ErrandError.transport(URLError(.unknown)).description == "The transfer failed (URLError -1)")
    }
}
