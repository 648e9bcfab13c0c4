import Foundation
import Testing

@testable import Errand

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The servers `.ci/interop-servers` starts, each named by an environment variable: hypercorn
/// (HTTP/2 over TLS, h2c, and a listener that requires a client certificate) serving
/// `ConnectionServer/connection_app.py`, certificates made by trustme, pproxy (HTTP and SOCKS5
/// proxies, with and without credentials), httpbin under gunicorn on a Unix socket, and an HTTP/2
/// server that misbehaves on purpose (`ConnectionServer/h2_fault_server.py`, on hyper-h2).
private enum Servers {
    static let environment = ProcessInfo.processInfo.environment
    static func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
    static func file(_ name: String) -> URL? { value(name).map { URL(fileURLWithPath: $0) } }

    static let h2 = value("ERRAND_H2_URL")
    static let h2c = value("ERRAND_H2C_URL")
    static let mtls = value("ERRAND_MTLS_URL")
    static let httpbin = value("ERRAND_HTTPBIN_URL")
    static let httpProxy = value("ERRAND_HTTP_PROXY_URL")
    static let httpProxyWithCredentials = value("ERRAND_HTTP_PROXY_AUTH_URL")
    static let socksProxy = value("ERRAND_SOCKS5_PROXY_URL")
    static let socksProxyWithCredentials = value("ERRAND_SOCKS5_PROXY_AUTH_URL")
    static let unixSocket = value("ERRAND_UNIX_SOCKET")
    static let fault = value("ERRAND_H2_FAULT_URL")
    static let faultTLS = value("ERRAND_H2_FAULT_TLS_URL")
    static let certificateAuthority = file("ERRAND_CONNECTION_CA")
    static let otherCertificateAuthority = file("ERRAND_CONNECTION_OTHER_CA")
    static let clientCertificate = file("ERRAND_CONNECTION_CLIENT_CERT")
    static let clientKey = file("ERRAND_CONNECTION_CLIENT_KEY")
    static let encryptedClientKey = file("ERRAND_CONNECTION_CLIENT_KEY_ENCRYPTED")
    static let serverKey = file("ERRAND_CONNECTION_SERVER_KEY")

    static var areRunning: Bool { h2 != nil && certificateAuthority != nil }
}

/// A GET (or other method) of a path or URL.
private struct Call: BaseRequest {
    var url: String
    var method: HTTPMethod = .get
    var arguments: [String: any Sendable]? = nil
    var requestSerializerType: RequestSerializerType { .json }
    // The default, not less: beside the soak's 32 threads on two cores, the Python servers (and the
    // proxy in front of them) are starved, and a request that takes 0.1 s alone takes 8 s or more.
    var timeoutInterval: TimeInterval { 60 }
    var coalescesDuplicates: Bool { false }
}

/// What `connection_app.py` answers.
private struct Echo: Decodable {
    let path: String
    let method: String
    let httpVersion: String
    let clientPort: Int
    let host: String?
    let headers: [String: String]
}

@Suite(
    "Connections against hypercorn, trustme, pproxy, gunicorn and hyper-h2 (ERRAND_H2_URL …)",
    .enabled(if: Servers.areRunning, "ERRAND_H2_URL is not set: the connection interop suite is skipped"))
struct ConnectionInteropTests {
    /// An agent whose transport connects as `configure` says, with the test CA trusted.
    private func agent(
        _ kind: Kind = .curl, trustingTestCA: Bool = true, _ configure: (inout ConnectionOptions) -> Void = { _ in }
    ) throws -> NetworkAgent {
        var connection = ConnectionOptions()
        if trustingTestCA { connection.trustedRoots = .adding([try #require(Servers.certificateAuthority)]) }
        configure(&connection)
        let config = NetworkConfig()
        config.callbackQueue = DispatchQueue(label: "ConnectionInteropTests")
        let transport: any Transport =
            kind == .curl ? CurlTransport(connection: connection) : URLSessionTransport(connection: connection)
        let agent = NetworkAgent(config: config, transport: transport)
        agent.maxConcurrentRequests = 64
        return agent
    }

    enum Kind { case curl, urlSession }

    /// Runs `call` and returns its finished task, success or not.
    private func run(_ call: Call, on agent: NetworkAgent) async -> RequestTask {
        await withCheckedContinuation { continuation in
            agent.start(
                call, success: { continuation.resume(returning: $0) }, failure: { continuation.resume(returning: $0) })
        }
    }

    private func echo(_ task: RequestTask) throws -> Echo {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(Echo.self, from: try #require(task.responseData, "\(String(describing: task.error))"))
    }

    private func reason(_ error: ErrandError?) -> String {
        if case .transport(let failure) = error { return failure.localizedDescription }
        return String(describing: error)
    }

    // MARK: HTTP versions and multiplexing

    @Test func httpsSpeaksHTTP2ByALPN() async throws {
        let task = await run(Call(url: try #require(Servers.h2) + "/hello"), on: try agent())
        #expect(try echo(task).httpVersion == "2")
        #expect(task.metrics?.httpVersion == "HTTP/2")
    }

    @Test func fiftyConcurrentRequestsShareOneHTTP2Connection() async throws {
        let agent = try agent()
        let base = try #require(Servers.h2)
        let tasks = await withTaskGroup(of: RequestTask.self) { group in
            for index in 0..<50 { group.addTask { await run(Call(url: base + "/delay?ms=300&i=\(index)"), on: agent) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let echoes = try tasks.map(echo)
        #expect(echoes.count == 50)
        #expect(Set(echoes.map(\.clientPort)).count == 1, "connections: \(Set(echoes.map(\.clientPort)))")
        #expect(echoes.allSatisfy { $0.httpVersion == "2" })
        #expect(tasks.filter { $0.metrics?.isReusedConnection == false }.count == 1)
    }

    @Test func http1_1OnlyStaysOnHTTP1EvenWhereHTTP2IsOffered() async throws {
        let task = await run(
            Call(url: try #require(Servers.h2) + "/hello"), on: try agent { $0.httpVersion = .http1_1 })
        #expect(try echo(task).httpVersion == "1.1")
        #expect(task.metrics?.httpVersion == "HTTP/1.1")
    }

    @Test func h2cWithPriorKnowledgeWorksForEveryRequest() async throws {
        let agent = try agent { $0.httpVersion = .http2PriorKnowledge }
        let base = try #require(Servers.h2c)
        // libcurl before 8.0 fails a second request on one h2c connection: each must still succeed.
        for index in 0..<3 {
            let task = await run(Call(url: base + "/sequential/\(index)"), on: agent)
            #expect(try echo(task).httpVersion == "2")
            #expect(task.metrics?.httpVersion == "HTTP/2")
        }
        let concurrent = await withTaskGroup(of: RequestTask.self) { group in
            for index in 0..<8 { group.addTask { await run(Call(url: base + "/delay?ms=100&i=\(index)"), on: agent) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(try concurrent.map(echo).allSatisfy { $0.httpVersion == "2" })
        let post = await run(Call(url: base + "/posted", method: .post, arguments: ["n": 1]), on: agent)
        #expect(try echo(post).method == "POST")
    }

    @Test(arguments: [Kind.curl, .urlSession])
    func plainHTTPIsHTTP1AndKeepsToTheConnectionsPerHost(_ kind: Kind) async throws {
        let agent = try agent(kind, trustingTestCA: false) { $0.maximumConnectionsPerHost = 2 }
        let base = try #require(Servers.h2c)
        let tasks = await withTaskGroup(of: RequestTask.self) { group in
            for index in 0..<8 { group.addTask { await run(Call(url: base + "/delay?ms=200&i=\(index)"), on: agent) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let echoes = try tasks.map(echo)
        #expect(echoes.allSatisfy { $0.httpVersion == "1.1" })
        #expect((1...2).contains(Set(echoes.map(\.clientPort)).count), "\(Set(echoes.map(\.clientPort)))")
    }

    // MARK: Trusted roots and client certificates

    @Test func aPrivateCAIsTrustedOnlyWhenAdded() async throws {
        let url = try #require(Servers.h2) + "/hello"
        let system = await run(Call(url: url), on: try agent(trustingTestCA: false))
        guard case .transport(let failure) = system.error else {
            Issue.record("expected an untrusted certificate, got \(String(describing: system.error))")
            return
        }
        #expect(failure.code == .serverCertificateUntrusted)
        let other = await run(
            Call(url: url),
            on: try agent(trustingTestCA: false) { $0.trustedRoots = .only([Servers.otherCertificateAuthority!]) })
        #expect(other.error != nil && other.responseData == nil)
        let only = await run(
            Call(url: url),
            on: try agent(trustingTestCA: false) { $0.trustedRoots = .only([Servers.certificateAuthority!]) })
        #expect(only.responseStatusCode == 200)
    }

    @Test func aClientCertificateIsPresentedWhenTheServerRequiresOne() async throws {
        let url = try #require(Servers.mtls) + "/whoami"
        let certificate = try #require(Servers.clientCertificate)
        let plain = await run(
            Call(url: url),
            on: try agent {
                $0.clientIdentity = ClientIdentity(certificate: certificate, privateKey: Servers.clientKey!)
            })
        #expect(plain.responseStatusCode == 200, "\(String(describing: plain.error))")
        let encrypted = await run(
            Call(url: url),
            on: try agent {
                $0.clientIdentity = ClientIdentity(
                    certificate: certificate, privateKey: Servers.encryptedClientKey!, password: "errand-test")
            })
        #expect(encrypted.responseStatusCode == 200)
    }

    @Test func withoutAClientCertificateTheHandshakeFailsOnce() async throws {
        let task = await run(Call(url: try #require(Servers.mtls) + "/whoami"), on: try agent())
        #expect(task.error != nil)
        #expect(task.responseStatusCode == 0 || task.responseData == nil)
    }

    @Test func aWrongPasswordOrAKeyOfAnotherCertificateFailsNamingTheIdentity() async throws {
        let url = try #require(Servers.mtls) + "/whoami"
        let certificate = try #require(Servers.clientCertificate)
        for identity in [
            ClientIdentity(certificate: certificate, privateKey: Servers.encryptedClientKey!, password: "wrong"),
            ClientIdentity(certificate: certificate, privateKey: Servers.serverKey!),
        ] {
            let task = await run(Call(url: url), on: try agent { $0.clientIdentity = identity })
            #expect(reason(task.error).contains("ConnectionOptions.clientIdentity"), "\(reason(task.error))")
        }
    }

    @Test func aHostOverrideKeepsTheNameForHostAndCertificate() async throws {
        let h2 = try #require(Servers.h2.flatMap(URL.init(string:)))
        let port = try #require(h2.port)
        let agent = try agent { $0.hostOverrides = ["api.errand.test:\(port)": "127.0.0.1"] }
        let task = await run(Call(url: "https://api.errand.test:\(port)/hello"), on: agent)
        #expect(try echo(task).host == "api.errand.test:\(port)")
        #expect(task.metrics?.remoteAddress == "127.0.0.1")
    }

    // MARK: Proxies

    @Test func anHTTPProxyCarriesPlainRequestsAndTunnelsHTTPS() async throws {
        let proxy = try #require(Servers.httpProxy.flatMap(URL.init(string:)))
        let agent = try agent { $0.proxy = .http(proxy) }
        let plain = await run(Call(url: try #require(Servers.httpbin) + "/get"), on: agent)
        #expect(plain.responseStatusCode == 200, "\(String(describing: plain.error))")
        let tunnelled = await run(Call(url: try #require(Servers.h2) + "/hello"), on: agent)
        #expect(try echo(tunnelled).httpVersion == "2")
        #expect(tunnelled.metrics?.remoteAddress == "127.0.0.1")
    }

    @Test func aProxyThatWantsCredentialsGetsThemFromItsURL() async throws {
        let proxy = try #require(Servers.httpProxyWithCredentials.flatMap(URL.init(string:)))
        let agent = try agent { $0.proxy = .http(proxy) }
        let plain = await run(Call(url: try #require(Servers.httpbin) + "/get"), on: agent)
        #expect(plain.responseStatusCode == 200, "\(String(describing: plain.error))")
        let tunnelled = await run(Call(url: try #require(Servers.h2) + "/hello"), on: agent)
        #expect(tunnelled.responseStatusCode == 200)
        // The credentials went to the proxy, not to the server.
        #expect(try echo(tunnelled).headers["proxy-authorization"] == nil)
    }

    @Test func aProxyThatWantsCredentialsAndGetsNoneFailsOnce() async throws {
        var bare = try #require(Servers.httpProxyWithCredentials.flatMap(URLComponents.init(string:)))
        bare.user = nil
        bare.password = nil
        let agent = try agent { $0.proxy = .http(bare.url!) }
        let plain = await run(Call(url: try #require(Servers.httpbin) + "/get"), on: agent)
        #expect(plain.error == .statusCode(407))
        let tunnelled = await run(Call(url: try #require(Servers.h2) + "/hello"), on: agent)
        guard case .transport(let failure) = tunnelled.error else {
            Issue.record("expected a refused tunnel, got \(String(describing: tunnelled.error))")
            return
        }
        #expect(failure.code == .userAuthenticationRequired)
        #expect(failure.localizedDescription.contains("407"))
    }

    @Test func aSOCKS5ProxyCarriesPlainAndTLSRequests() async throws {
        for proxy in [Servers.socksProxy, Servers.socksProxyWithCredentials] {
            let agent = try agent { $0.proxy = .socks5(URL(string: proxy!)!) }
            let plain = await run(Call(url: try #require(Servers.httpbin) + "/get"), on: agent)
            #expect(plain.responseStatusCode == 200, "\(String(describing: plain.error))")
            let tls = await run(Call(url: try #require(Servers.h2) + "/hello"), on: agent)
            #expect(try echo(tls).httpVersion == "2")
        }
    }

    @Test func aSOCKS5ProxyThatRefusesTheCredentialsFailsOnce() async throws {
        var wrong = try #require(Servers.socksProxyWithCredentials.flatMap(URLComponents.init(string:)))
        wrong.password = "wrong"
        let agent = try agent { $0.proxy = .socks5(wrong.url!) }
        let task = await run(Call(url: try #require(Servers.httpbin) + "/get"), on: agent)
        #expect(reason(task.error).contains("ConnectionOptions.proxy"), "\(reason(task.error))")
    }

    // MARK: Unix sockets

    @Test func httpbinOnAUnixSocketAnswersUnderItsBaseURL() async throws {
        let path = try #require(Servers.unixSocket)
        let config = NetworkConfig()
        config.baseUrl = "http+unix://" + path.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        config.callbackQueue = DispatchQueue(label: "ConnectionInteropTests.unix")
        let agent = NetworkAgent(config: config, transport: CurlTransport())
        let got = try await agent.response(Call(url: "/get", arguments: ["q": "1"]))
        let json = try #require(got.jsonObject as? [String: Any])
        #expect((json["args"] as? [String: String])?["q"] == "1")
        #expect((json["headers"] as? [String: String])?["Host"] == "localhost")
        let posted = try await agent.response(Call(url: "/post", method: .post, arguments: ["name": "ann"]))
        #expect(((posted.jsonObject as? [String: Any])?["json"] as? [String: String])?["name"] == "ann")
    }

    // MARK: HTTP/2 servers that misbehave

    @Test(arguments: ["ERRAND_H2_FAULT_URL", "ERRAND_H2_FAULT_TLS_URL"])
    func aGoawayOrAResetMidResponseFailsThatRequestOnce(_ variable: String) async throws {
        let base = try #require(Servers.value(variable))
        let agent = try agent { $0.httpVersion = .http2PriorKnowledge }
        for path in ["/goaway-mid-response", "/reset-mid-response"] {
            let task = await run(Call(url: base + path), on: agent)
            guard case .transport(let failure) = task.error else {
                Issue.record("\(path): expected a lost connection, got \(String(describing: task.error))")
                continue
            }
            #expect(failure.code == .networkConnectionLost, "\(path): \(failure.localizedDescription)")
            let after = await run(Call(url: base + "/ok"), on: agent)
            #expect(after.responseStatusCode == 200, "\(path): the next request")
        }
    }

    @Test(arguments: ["ERRAND_H2_FAULT_URL", "ERRAND_H2_FAULT_TLS_URL"])
    func aRequestTheServerNeverProcessedIsReplayedOnce(_ variable: String) async throws {
        let base = try #require(Servers.value(variable))
        let agent = try agent { $0.httpVersion = .http2PriorKnowledge }
        for path in ["/refuse-once", "/goaway-before-processing"] {
            let key = UUID().uuidString
            let task = await run(Call(url: base + "\(path)?key=\(key)"), on: agent)
            #expect(task.responseStatusCode == 200, "\(path): \(String(describing: task.error))")
            let count = try await agent.response(Call(url: base + "/count?key=\(key)"))
            #expect((count.jsonObject as? [String: Int])?["count"] == 2, "\(path)")
        }
    }

    @Test(arguments: ["ERRAND_H2_FAULT_URL", "ERRAND_H2_FAULT_TLS_URL"])
    func aPostAGoawayCutOffIsNotReplayedButAPostTheServerRefusedIs(_ variable: String) async throws {
        let base = try #require(Servers.value(variable))
        let agent = try agent { $0.httpVersion = .http2PriorKnowledge }
        // A GOAWAY does not say here whether the server acted on the POST: it fails, once.
        let cutOff = UUID().uuidString
        let task = await run(Call(url: base + "/goaway-before-processing?key=\(cutOff)", method: .post), on: agent)
        guard case .transport(let failure) = task.error else {
            Issue.record("expected a lost connection, got \(String(describing: task.error))")
            return
        }
        #expect(failure.code == .networkConnectionLost)
        let sent = try await agent.response(Call(url: base + "/count?key=\(cutOff)"))
        #expect((sent.jsonObject as? [String: Int])?["count"] == 1)
        // REFUSED_STREAM promises the server did nothing: even a POST goes again.
        let refused = UUID().uuidString
        let retried = await run(Call(url: base + "/refuse-once?key=\(refused)", method: .post), on: agent)
        #expect(retried.responseStatusCode == 200)
    }

    @Test(arguments: ["ERRAND_H2_FAULT_URL", "ERRAND_H2_FAULT_TLS_URL"])
    func anHTTP2ServerThatNeverAnswersMeetsTheTimeout(_ variable: String) async throws {
        let base = try #require(Servers.value(variable))
        struct Hang: BaseRequest {
            var url: String
            var timeoutInterval: TimeInterval { 1 }
        }
        let agent = try agent { $0.httpVersion = .http2PriorKnowledge }
        await #expect(throws: ErrandError.timedOut) { try await agent.response(Hang(url: base + "/hang-headers")) }
    }
}

@Suite("Connection interop servers")
struct ConnectionInteropServerTests {
    @Test(
        "connection interop suite is not silently skipped in CI",
        .enabled(if: ProcessInfo.processInfo.environment["CI"] == "true"))
    func serversAreConfiguredInCI() {
        #expect(Servers.areRunning && Servers.unixSocket != nil && Servers.httpProxy != nil && Servers.fault != nil)
    }
}
