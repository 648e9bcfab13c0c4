import ErrandTestServer
import Foundation
import Testing

@testable import Errand

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The IETF http-state working group's 222 cookie parser tests (github.com/abarth/http-state,
/// commit 155e45c, `tests/data/parser`), run through Errand's public API as the group's harness
/// ran them in a browser: `GET http://home.example.org:8888/cookie-parser?NAME`, whose `302`
/// sets the test's cookies and leads to the page that says whether the next request's `Cookie`
/// was the expected one. Under whichever transport the suite runs with (`ERRAND_TRANSPORT`).
///
/// The tests name hosts of their own (`home.example.org`, `sibling.example.org`, …), which their
/// `Domain` attributes and redirects depend on, so the client reaches them through the test
/// server as its HTTP proxy. URLSessionTransport on Linux honours only the environment's proxy,
/// so the tests run in a child process whose `http_proxy` names the server: the same path for
/// both transports, and no other test's requests go through it.
///
/// On 2 December 2026, before Errand had a cookie jar of its own (the transports stored and sent
/// cookies through HTTPCookieStorage), 155 to 160 of 222 passed under either transport, varying
/// from run to run with the order HTTPCookieStorage sent cookies in.
@Suite("http-state cookie parser tests")
struct HTTPStateParserTests {
    /// The vendored `parser/` folder of the group's test data.
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/HTTPState/parser")

    /// Marks the child's part of the test.
    private static let childVariable = "ERRAND_HTTP_STATE_CHILD"
    /// Starts the line of the child's output that holds its verdicts, as JSON.
    private static let marker = "http-state-verdicts: "
    /// How many tests run at once: each has an agent, a transport and connections of its own.
    private static let concurrency = 8

    /// What one test's result page said.
    struct Verdict: Codable, Sendable {
        let name: String
        let passed: Bool
        /// The result page's body, or why there was none.
        let detail: String
    }

    /// The first request of a test; the redirects that follow it are the transport's.
    struct ParserTest: BaseRequest {
        let name: String
        var url: String { "http://home.example.org:8888/cookie-parser?\(name)" }
        var responseSerializerType: ResponseSerializerType { .data }
        var timeoutInterval: TimeInterval { 15 }
    }

    /// The names of the tests, from the `NAME-test` files of the folder.
    static func testNames() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: fixtures.path)
            .filter { $0.hasSuffix("-test") }
            .map { String($0.dropLast("-test".count)) }
            .sorted()
    }

    /// Runs test `name` with a configuration of its own, so that no test sees another's cookies.
    static func verdict(of name: String, callbacks: DispatchQueue) async -> Verdict {
        let config = NetworkConfig()
        config.callbackQueue = callbacks
        // Each ephemeral configuration has a cookie storage of its own, where the transports keep
        // cookies until the configuration's cookie jar does.
        config.sessionConfiguration = URLSessionConfiguration.ephemeral
        config.connection.proxy = .environment
        do {
            let response = try await NetworkAgent(config: config).response(ParserTest(name: name))
            let body = String(decoding: response.data, as: UTF8.self)
            return Verdict(name: name, passed: body == "PASS\n", detail: body)
        } catch {
            return Verdict(name: name, passed: false, detail: "no result page: \(error)")
        }
    }

    /// Every test's verdict, `concurrency` tests at a time, in the order of their names.
    static func verdicts(of names: [String]) async -> [Verdict] {
        let callbacks = DispatchQueue(label: "errand.http-state-tests.callbacks")
        return await withTaskGroup(of: Verdict.self) { group in
            var waiting = names[...]
            for _ in 0..<concurrency {
                guard let name = waiting.popFirst() else { break }
                group.addTask { await verdict(of: name, callbacks: callbacks) }
            }
            var verdicts: [Verdict] = []
            for await verdict in group {
                verdicts.append(verdict)
                if let name = waiting.popFirst() {
                    group.addTask { await Self.verdict(of: name, callbacks: callbacks) }
                }
            }
            return verdicts.sorted { $0.name < $1.name }
        }
    }

    /// The child's part of the next test: every verdict, printed as one line of JSON.
    @Test(.enabled(if: ProcessInfo.processInfo.environment[childVariable] != nil))
    func childRunsEveryHTTPStateParserTest() async throws {
        let verdicts = await Self.verdicts(of: try Self.testNames())
        print(Self.marker + String(decoding: try JSONEncoder().encode(verdicts), as: UTF8.self))
    }

    /// The set of failing tests is exactly ``HTTPStateKnownFailures``: a test that starts to pass
    /// fails this as one that starts to fail does, so every change of verdict is seen.
    @Test func theFailingTestsAreTheKnownExceptionsOfAnRFC6265bisJar() async throws {
        let names = try Self.testNames()
        #expect(names.count == 222, "the vendored folder holds all the group's parser tests")
        let server = try TestServer(cookieParserTests: Self.fixtures)
        defer { server.stop() }
        let ending = try await ChildTest.run(
            "childRunsEveryHTTPStateParserTest",
            environment: [Self.childVariable: "1", "http_proxy": server.baseURL, "no_proxy": "", "NO_PROXY": ""],
            timeLimit: 600)
        let line = try #require(ending.line(after: Self.marker), "the child gave no verdicts:\n\(ending.tail)")
        let verdicts = try JSONDecoder().decode([Verdict].self, from: Data(line.utf8))
        #expect(verdicts.map(\.name) == names, "a verdict for every test")

        let transport = ProcessInfo.processInfo.environment["ERRAND_TRANSPORT"] ?? "the default transport"
        let failing = verdicts.filter { !$0.passed }
        print(
            "http-state parser tests under \(transport): \(verdicts.count - failing.count) of \(verdicts.count) pass;"
                + " failing: \(failing.map(\.name).joined(separator: " "))")

        let known = HTTPStateKnownFailures.at(Date())
        let newFailures = failing.filter { known[$0.name] == nil }
        let newFailureNames = newFailures.map(\.name)
        let details = newFailures.map { "\($0.name):\n\($0.detail)" }.joined(separator: "\n")
        #expect(newFailureNames.isEmpty, "fail, and are not known to:\n\n\(details)")
        let newPasses = known.keys.filter { name in verdicts.contains { $0.name == name && $0.passed } }.sorted()
        let reasons = Dictionary(grouping: newPasses) { known[$0] ?? "" }
            .map { "\($0.value.joined(separator: " ")): \($0.key)" }.sorted().joined(separator: "\n")
        #expect(
            newPasses.isEmpty,
            "pass, but are known failures — drop them from HTTPStateKnownFailures if the change is right:\n\(reasons)")
    }
}
