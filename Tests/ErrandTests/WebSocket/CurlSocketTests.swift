import ErrandTestServer
import Foundation
import Testing

@testable import Errand

/// Connections CurlTransport opens for WebSockets: libcurl connects, the upgrade and frames go
/// over `curl_easy_send`/`curl_easy_recv` (straight over the socket without TLS), and the curl
/// thread's poll watches the socket.
@Suite("CurlTransport: WebSocket connections")
struct CurlSocketTests {
    /// Records a socket's events: its head, the bytes after it, and how it ended.
    final class Recorder: Sendable {
        private let state = Locked<(status: Int?, headers: [String: String], body: Data, end: ErrandError??)>(
            (nil, [:], Data(), nil))

        func record(_ event: TransportEvent) {
            state.withLock { state in
                switch event {
                case .responseHead(let status, let headers): (state.status, state.headers) = (status, headers)
                case .body(let bytes): state.body.append(bytes)
                case .completed(let error): state.end = .some(error)
                case .interimHead, .uploadProgress, .trailers, .metrics: break
                }
            }
        }

        var status: Int? { state.withLock { $0.status } }
        var headers: [String: String] { state.withLock { $0.headers } }
        var body: Data { state.withLock { $0.body } }
        /// `nil` while open; `.some(nil)` after an orderly close by the peer.
        var end: ErrandError?? { state.withLock { $0.end } }

        /// The frames in what arrived after the head.
        func frames() throws -> [WebSocketFrame] {
            var decoder = WebSocketFrameDecoder(maximumPayload: 1 << 24, allowsCompression: false)
            decoder.append(body)
            var frames: [WebSocketFrame] = []
            while let frame = try decoder.nextFrame() { frames.append(frame) }
            return frames
        }
    }

    static func upgradeHead(_ server: TestServer, _ target: String) -> Data {
        let fields = WebSocketHandshake(options: WebSocketOptions()).headerFields
            .filter { $0.name != "Sec-WebSocket-Extensions" }
        let lines =
            ["GET \(target) HTTP/1.1", "Host: 127.0.0.1:\(server.port)"] + fields.map { "\($0.name): \($0.value)" }
        return Data((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
    }

    static func open(_ server: TestServer, _ target: String, transport: CurlTransport = CurlTransport()) throws
        -> (CurlTask, Recorder)
    {
        let recorder = Recorder()
        let fields = WebSocketHandshake(options: WebSocketOptions()).headerFields
            .filter { $0.name != "Sec-WebSocket-Extensions" }
        var request = TransportRequest(
            url: URL(string: "ws://127.0.0.1:\(server.port)\(target)")!,
            headers: Dictionary(uniqueKeysWithValues: fields.map { ($0.name, $0.value) }), timeoutInterval: 10)
        request.upgradesToWebSocket = true
        let task = try #require(transport.send(request, events: recorder.record) as? CurlTask)
        return (task, recorder)
    }

    static func write(_ task: CurlTask, _ frame: WebSocketFrame) async -> ErrandError? {
        await withCheckedContinuation { continuation in
            task.write(frame.encoded(maskingKey: 0x0102_0304)) { continuation.resume(returning: $0) }
        }
    }

    @Test func theUpgradeIsAnsweredAndFramesGoBothWays() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (task, recorder) = try Self.open(server, "/ws/echo")
        try await eventually { recorder.status != nil }
        #expect(recorder.status == 101)
        #expect(recorder.headers.headerField("Upgrade") == "websocket")
        #expect(await Self.write(task, WebSocketFrame(opcode: .text, payload: Data("hi".utf8))) == nil)
        let big = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0) })
        #expect(await Self.write(task, WebSocketFrame(opcode: .binary, payload: big)) == nil)
        try await eventually { (try? recorder.frames().count) == 2 }
        #expect(
            try recorder.frames() == [
                WebSocketFrame(opcode: .text, payload: Data("hi".utf8)), WebSocketFrame(opcode: .binary, payload: big),
            ])
        #expect(recorder.end == nil)
        task.cancel()
        try await eventually { recorder.end != nil }
        #expect(recorder.end == .some(.cancelled))
        #expect(await Self.write(task, WebSocketFrame(opcode: .text, payload: Data())) == .cancelled)
    }

    @Test func aRefusedHandshakeGivesItsStatusAndBodyThenEnds() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (_, recorder) = try Self.open(server, "/ws/echo?status=401")
        try await eventually { recorder.end != nil }
        #expect(recorder.status == 401)
        #expect(String(decoding: recorder.body, as: UTF8.self) == "refused with 401\n")
        #expect(recorder.end == .some(nil))
    }

    @Test func aPeerThatDropsTheConnectionEndsItWithoutError() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (task, recorder) = try Self.open(server, "/ws/echo?drop=1")
        try await eventually { recorder.status == 101 }
        _ = await Self.write(task, WebSocketFrame(opcode: .text, payload: Data("bye".utf8)))
        try await eventually { recorder.end != nil }
        #expect(recorder.end == .some(nil))
    }

    @Test func nothingListeningIsATransportError() async throws {
        let server = try TestServer()
        server.stop()
        let (_, recorder) = try Self.open(server, "/ws/echo")
        try await eventually { recorder.end != nil }
        guard case .some(.some(.transport(let error))) = recorder.end else {
            Issue.record("ended with \(String(describing: recorder.end))")
            return
        }
        #expect(error.code == .cannotConnectToHost)
    }

    @Test func theHeadIsTheRequestAsHTTP11WithItsHostAndCookies() {
        var request = TransportRequest(
            url: URL(string: "ws://[::1]:8080/a%20b?q=1&r")!, headers: ["X-Token": "t"])
        request.upgradesToWebSocket = true
        let head = String(decoding: CurlSocket.head(of: request, cookieHeader: "s=1"), as: UTF8.self)
        #expect(head == "GET /a%20b?q=1&r HTTP/1.1\r\nHost: [::1]:8080\r\nX-Token: t\r\nCookie: s=1\r\n\r\n")
        let unix = TransportRequest(url: URL(string: "http+unix://%2Ftmp%2Fs.sock/v1/events")!)
        #expect(
            String(decoding: CurlSocket.head(of: unix, cookieHeader: nil), as: UTF8.self).hasPrefix(
                "GET /v1/events HTTP/1.1\r\n"))
    }

    @Test func wsAndWssAreHTTPAndHTTPSToLibcurlAndBackToApps() {
        #expect(WebSocketURL.webSocket(URL(string: "http://a/b?c")!).absoluteString == "ws://a/b?c")
        #expect(WebSocketURL.webSocket(URL(string: "HTTPS://a:8443/")!).absoluteString == "wss://a:8443/")
        #expect(WebSocketURL.webSocket(URL(string: "http+unix://%2Fs/v1")!).absoluteString == "http+unix://%2Fs/v1")
        #expect(WebSocketURL.http(URL(string: "ws://a/b?c")!).absoluteString == "http://a/b?c")
        #expect(WebSocketURL.http(URL(string: "WSS://a:8443/")!).absoluteString == "https://a:8443/")
        #expect(WebSocketURL.http(URL(string: "https://a/")!).absoluteString == "https://a/")
    }

    /// Only a connection with no TLS on it, to the server or to a proxy, is read and written
    /// straight on its socket: bytes read past OpenSSL would be ciphertext.
    @Test func onlyAConnectionWithoutTLSIsReadStraightFromItsSocket() {
        func settings(_ proxy: ProxyConfiguration) -> CurlConnectionSettings {
            var connection = ConnectionOptions()
            connection.proxy = proxy
            return CurlConnectionSettings(connection: connection, sessionLimit: 6, libraryVersion: 0x07_58_01)
        }
        let plain = URL(string: "http://127.0.0.1:8080/ws")!
        let overTLS = URL(string: "https://127.0.0.1:8443/ws")!
        let unix = URL(string: "http+unix://%2Ftmp%2Fserver.sock/ws")!
        #expect(settings(.none).isCleartext(toReach: plain))
        #expect(!settings(.none).isCleartext(toReach: overTLS))
        #expect(settings(.none).isCleartext(toReach: unix))
        #expect(settings(.http(URL(string: "http://proxy:3128")!)).isCleartext(toReach: plain))
        #expect(settings(.socks5(URL(string: "socks5://proxy:1080")!)).isCleartext(toReach: plain))
        // TLS to the proxy, the tunnel inside it.
        #expect(!settings(.http(URL(string: "HTTPS://proxy:3129")!)).isCleartext(toReach: plain))
        #expect(!settings(.http(URL(string: "https://proxy:3129")!)).isCleartext(toReach: overTLS))
        #expect(settings(.http(URL(string: "https://proxy:3129")!)).isCleartext(toReach: unix))
    }
}
