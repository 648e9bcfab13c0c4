import Foundation
import Testing

@testable import Errand

/// The `websockets` library's server (`WebSocketServer/websocket_server.py`), a strict peer no one
/// here wrote, on every listener `.ci/interop-servers` starts: compression on and off, TLS with
/// trustme's CA, a required client certificate, pproxy's HTTP CONNECT and a Unix socket. The
/// agent's default transport is used, so CI runs this under both transports.
private enum Servers {
    static let environment = ProcessInfo.processInfo.environment
    static func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
    static func file(_ name: String) -> URL? { value(name).map { URL(fileURLWithPath: $0) } }

    static let deflate = value("ERRAND_WEBSOCKET_URL")
    static let plain = value("ERRAND_WEBSOCKET_PLAIN_URL")
    static let tls = value("ERRAND_WEBSOCKET_TLS_URL")
    static let mtls = value("ERRAND_WEBSOCKET_MTLS_URL")
    static let unixSocket = value("ERRAND_WEBSOCKET_UNIX_SOCKET")
    static let httpProxy = value("ERRAND_HTTP_PROXY_URL")
    static let certificateAuthority = file("ERRAND_CONNECTION_CA")
    static let clientCertificate = file("ERRAND_CONNECTION_CLIENT_CERT")
    static let clientKey = file("ERRAND_CONNECTION_CLIENT_KEY")

    static var areRunning: Bool { deflate != nil && certificateAuthority != nil }
}

/// A path or URL of the server.
private struct Socket: BaseRequest {
    var url: String
    var headers: [String: String] = [:]
    // The default: under the thread sanitizer, beside the rest of the suite, a handshake may take seconds.
    var timeoutInterval: TimeInterval { 60 }
    var responseSerializerType: ResponseSerializerType { .string }
}

/// What `/hello` says.
private struct Hello: Decodable {
    let subprotocol: String?
    let deflate: Bool
    let authorization: String?
}

@Suite(
    "WebSocket against the websockets library (ERRAND_WEBSOCKET_URL …)",
    .enabled(if: Servers.areRunning, "ERRAND_WEBSOCKET_URL is not set: the WebSocket interop suite is skipped"))
struct WebSocketInteropTests {
    /// The default options without the keep-alive: beside the whole suite under the thread
    /// sanitizer, a pong can take longer than the ping timeout to be read.
    static var quiet: WebSocketOptions {
        var options = WebSocketOptions()
        options.pingInterval = nil
        return options
    }

    /// An agent on the default transport, trusting the test CA, connecting as `configure` says.
    private func agent(baseUrl: String = "", _ configure: (inout ConnectionOptions) -> Void = { _ in }) throws
        -> NetworkAgent
    {
        let config = NetworkConfig()
        config.baseUrl = baseUrl
        var connection = ConnectionOptions()
        connection.trustedRoots = .adding([try #require(Servers.certificateAuthority)])
        configure(&connection)
        config.connection = connection
        return NetworkAgent(config: config)
    }

    /// Every message until the end, and the error it ended with.
    private func drain(_ socket: WebSocket) async -> ([WebSocketMessage], ErrandError?) {
        var messages: [WebSocketMessage] = []
        do {
            for try await message in socket { messages.append(message) }
            return (messages, nil)
        } catch {
            return (messages, error)
        }
    }

    /// Sends text and binary messages of several sizes and checks each comes back, then closes.
    private func roundTrip(_ socket: WebSocket) async throws {
        var messages = socket.makeAsyncIterator()
        // Every length encoding (7-bit, 16-bit, 64-bit); Autobahn and the fault tests take messages to 16 MiB.
        let sizes = [0, 1, 125, 126, 65_535, 65_536, 200_000]
        for size in sizes {
            let text = String(repeating: "é", count: size / 2)
            try await socket.send(text)
            #expect(try await messages.next() == .text(text))
            let bytes = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            try await socket.send(bytes)
            #expect(try await messages.next() == .binary(bytes))
        }
        await socket.close()
        #expect(try await messages.next() == nil)
        #expect(socket.closeCode == .normalClosure)
    }

    @Test(arguments: [true, false])
    func textAndBinaryEchoWithCompressionOnAndOff(compresses: Bool) async throws {
        let base = try #require(compresses ? Servers.deflate : Servers.plain)
        let socket = try await agent().webSocket(Socket(url: base + "/echo"), options: Self.quiet)
        #expect(socket.isCompressed == compresses)
        try await roundTrip(socket)

        var options = Self.quiet
        options.compression = false
        let uncompressed = try await agent().webSocket(Socket(url: base + "/echo"), options: options)
        #expect(!uncompressed.isCompressed, "nothing is compressed when the client does not offer it")
        try await roundTrip(uncompressed)
    }

    @Test func fragmentedMessagesArriveWhole() async throws {
        let socket = try await agent().webSocket(
            Socket(url: try #require(Servers.deflate) + "/fragmented"), options: Self.quiet)
        let (messages, error) = await drain(socket)
        #expect(messages == [.text("fragmented"), .binary(Data([0, 1, 2]))])
        #expect(error == nil && socket.closeCode == .normalClosure)
    }

    @Test func theServerChoosesAmongTheSubprotocolsOfferedAndSeesTheHeaders() async throws {
        var options = Self.quiet
        options.subprotocols = ["chat.v1", "chat.v2"]
        let hello = Socket(url: try #require(Servers.deflate) + "/hello", headers: ["Authorization": "Bearer t0ken"])
        let socket = try await agent().webSocket(hello, options: options)
        #expect(socket.subprotocol == "chat.v2")
        let (messages, error) = await drain(socket)
        #expect(error == nil)
        let said = try #require(messages.first).decode(Hello.self)
        #expect(said.subprotocol == "chat.v2" && said.deflate && said.authorization == "Bearer t0ken")

        let none = try await agent().webSocket(
            Socket(url: try #require(Servers.deflate) + "/hello"), options: Self.quiet)
        #expect(none.subprotocol == nil)
    }

    @Test func closeCodesGoBothWays() async throws {
        let base = try #require(Servers.plain)
        let closed = try await agent().webSocket(Socket(url: base + "/close?code=4001&reason=bye"), options: Self.quiet)
        let (_, error) = await drain(closed)
        #expect(error == .webSocketClosed(code: WebSocketCloseCode(rawValue: 4001), reason: "bye"))
        #expect(closed.closeCode == WebSocketCloseCode(rawValue: 4001) && closed.closeReason == "bye")

        let id = UUID().uuidString
        let socket = try await agent().webSocket(Socket(url: base + "/echo?id=\(id)"), options: Self.quiet)
        try await socket.close(WebSocketCloseCode(rawValue: 4002), reason: "done here")
        #expect(socket.closeCode == WebSocketCloseCode(rawValue: 4002), "the server echoes the client's code")
        let lastClose = try await NetworkAgent(config: NetworkConfig()).response(
            Socket(url: base.replacingOccurrences(of: "ws:", with: "http:") + "/last-close?id=\(id)"))
        #expect(lastClose.string == "4002 done here")
    }

    @Test func wssTrustsTheCAItIsGivenAndNoOther() async throws {
        let url = try #require(Servers.tls) + "/echo"
        try await roundTrip(try await agent().webSocket(Socket(url: url), options: Self.quiet))

        let untrusting = NetworkAgent(config: NetworkConfig())
        await #expect(throws: ErrandError.self) {
            try await untrusting.webSocket(Socket(url: url), options: Self.quiet)
        }
    }

    @Test func aRequiredClientCertificateIsPresented() async throws {
        let url = try #require(Servers.mtls) + "/echo"
        let certificate = try #require(Servers.clientCertificate)
        let identified = try agent {
            $0.clientIdentity = ClientIdentity(certificate: certificate, privateKey: Servers.clientKey!)
        }
        try await roundTrip(try await identified.webSocket(Socket(url: url), options: Self.quiet))

        await #expect(throws: ErrandError.self) { try await agent().webSocket(Socket(url: url), options: Self.quiet) }
    }

    @Test(arguments: [false, true])
    func throughAnHTTPProxysConnectTunnel(overTLS: Bool) async throws {
        let proxy = try #require(Servers.httpProxy.flatMap(URL.init(string:)))
        let url = try #require(overTLS ? Servers.tls : Servers.deflate) + "/echo"
        let socket = try await agent { $0.proxy = .http(proxy) }.webSocket(Socket(url: url), options: Self.quiet)
        try await roundTrip(socket)
    }

    @Test func overAUnixSocketBase() async throws {
        let path = try #require(Servers.unixSocket)
        let base = "http+unix://" + path.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let socket = try await agent(baseUrl: base).webSocket(Socket(url: "/echo"), options: Self.quiet)
        try await roundTrip(socket)
    }
}

@Suite("WebSocket interop server")
struct WebSocketInteropServerTests {
    @Test(
        "WebSocket interop suite is not silently skipped in CI",
        .enabled(if: ProcessInfo.processInfo.environment["CI"] == "true"))
    func serverIsConfiguredInCI() {
        #expect(Servers.areRunning && Servers.tls != nil && Servers.unixSocket != nil && Servers.httpProxy != nil)
    }
}
