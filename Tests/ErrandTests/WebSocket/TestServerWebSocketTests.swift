import ErrandScenarios
import ErrandTestServer
import Foundation
import Testing

@testable import Errand

/// `/ws/echo` of the embedded server, driven over a raw socket with the client's own frame
/// codec: the handshake, echoes, pings and the closing handshake the socket tests build on.
@Suite("TestServer WebSocket endpoint")
struct TestServerWebSocketTests {
    /// An open socket to `/ws/echo` with `query`, after its 101 head, with what followed the head.
    static func open(_ server: TestServer, _ query: String = "") async throws -> (RawHTTP, head: String, rest: Data) {
        let handshake = WebSocketHandshake(options: WebSocketOptions(), key: "dGhlIHNhbXBsZSBub25jZQ==")
        let fields = handshake.headerFields.filter { $0.name != "Sec-WebSocket-Extensions" }
        let head =
            (["GET /ws/echo\(query) HTTP/1.1", "Host: 127.0.0.1"] + fields.map { "\($0.name): \($0.value)" })
            .joined(separator: "\r\n") + "\r\n\r\n"
        return try await onOwnThread {
            let connection = try RawHTTP(port: server.port)
            try connection.send(Data(head.utf8))
            var received = Data()
            while received.range(of: Data("\r\n\r\n".utf8)) == nil, let piece = connection.receive() {
                received.append(piece)
            }
            let end = try #require(received.range(of: Data("\r\n\r\n".utf8)))
            return (
                connection, String(decoding: received[..<end.upperBound], as: UTF8.self),
                Data(received[end.upperBound...])
            )
        }
    }

    /// Reads frames from `connection` until `count` arrived or it closed.
    static func frames(_ count: Int, from connection: RawHTTP, after rest: Data) async throws -> [WebSocketFrame] {
        try await onOwnThread {
            var decoder = WebSocketFrameDecoder(maximumPayload: 1 << 20, allowsCompression: false)
            decoder.append(rest)
            var frames: [WebSocketFrame] = []
            while frames.count < count {
                if let frame = try decoder.nextFrame() {
                    frames.append(frame)
                } else if let piece = connection.receive() {
                    decoder.append(piece)
                } else {
                    break
                }
            }
            return frames
        }
    }

    static func send(_ frames: [WebSocketFrame], on connection: RawHTTP) throws {
        for frame in frames { try connection.send(frame.encoded(maskingKey: 0x0908_0706)) }
    }

    @Test func theHandshakeAcceptsTheKeyAndChoosesTheFirstSubprotocol() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (_, head, _) = try await Self.open(server)
        #expect(head.hasPrefix("HTTP/1.1 101 Switching Protocols\r\n"))
        #expect(head.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"))
        let refused = try await RawHTTP.get(server, "/ws/echo?status=401")
        #expect(refused.status == 401)
    }

    @Test func messagesPingsAndTheCloseAreEchoed() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (connection, _, rest) = try await Self.open(server)
        try Self.send(
            [
                WebSocketFrame(opcode: .text, isFinal: false, payload: Data("hel".utf8)),
                WebSocketFrame(opcode: .ping, payload: Data("p".utf8)),
                WebSocketFrame(opcode: .continuation, payload: Data("lo".utf8)),
                WebSocketFrame(opcode: .binary, payload: Data(count: 70_000)),
                WebSocketFrame(opcode: .close, payload: WebSocketFrame.closePayload(.normalClosure, reason: "")),
            ], on: connection)
        let frames = try await Self.frames(4, from: connection, after: rest)
        #expect(
            frames == [
                WebSocketFrame(opcode: .pong, payload: Data("p".utf8)),
                WebSocketFrame(opcode: .text, payload: Data("hello".utf8)),
                WebSocketFrame(opcode: .binary, payload: Data(count: 70_000)),
                WebSocketFrame(opcode: .close, payload: Data([0x03, 0xE8])),
            ])
    }

    @Test func theServerGreetsAndClosesWhenAsked() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (connection, _, rest) = try await Self.open(server, "?send=2&close=4001&reason=bye")
        let frames = try await Self.frames(3, from: connection, after: rest)
        #expect(frames.map(\.opcode) == [.text, .text, .close])
        #expect(frames.first?.payload == Data("message 1".utf8))
        #expect(frames.last?.payload == Data([0x0F, 0xA1]) + Data("bye".utf8))
    }

    @Test func aTaggedEchoNamesTheConnectionItWasReadOn() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (connection, _, rest) = try await Self.open(server, "?tag=s7g2")
        try Self.send(
            [
                WebSocketFrame(opcode: .text, payload: Data("n=1".utf8)),
                WebSocketFrame(opcode: .binary, payload: Data([1, 2])),
            ], on: connection)
        let frames = try await Self.frames(2, from: connection, after: rest)
        #expect(frames.map(\.payload) == [Data("s7g2|n=1".utf8), Data("s7g2|".utf8) + Data([1, 2])])
    }
}
