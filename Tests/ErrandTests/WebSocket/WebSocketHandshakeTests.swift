import Foundation
import Testing

@testable import Errand

/// The opening handshake (RFC 6455 §4) and the permessage-deflate answer (RFC 7692 §7.1).
@Suite("WebSocket handshake: the upgrade's fields and the checks on its answer")
struct WebSocketHandshakeTests {
    static let handshake = WebSocketHandshake(
        options: {
            var options = WebSocketOptions()
            options.subprotocols = ["chat.v2", "chat"]
            return options
        }(), key: "dGhlIHNhbXBsZSBub25jZQ==")

    static func answer(_ fields: [String: String] = [:]) -> Response {
        var headers = [
            "Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Accept": "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=",
        ]
        headers.merge(fields) { $1 }
        return Response(statusCode: 101, headers: headers.filter { !$0.value.isEmpty })
    }

    @Test func theUpgradeOffersVersion13TheSubprotocolsAndCompression() {
        let fields = Dictionary(uniqueKeysWithValues: Self.handshake.headerFields.map { ($0.name, $0.value) })
        #expect(fields["Sec-WebSocket-Version"] == "13")
        #expect(fields["Sec-WebSocket-Key"] == "dGhlIHNhbXBsZSBub25jZQ==")
        #expect(fields["Sec-WebSocket-Protocol"] == "chat.v2, chat")
        #expect(fields["Sec-WebSocket-Extensions"] == "permessage-deflate; client_max_window_bits")
        let key = WebSocketHandshake(options: WebSocketOptions()).key
        #expect(Data(base64Encoded: key)?.count == 16)
    }

    @Test func anAnswerAgreesToTheSubprotocolAndCompressionParameters() throws {
        let agreement = try Self.handshake.agreement(
            with: Self.answer([
                "Upgrade": "WebSocket", "Connection": "keep-alive, upgrade", "Sec-WebSocket-Protocol": "chat",
                "Sec-WebSocket-Extensions":
                    "permessage-deflate; server_no_context_takeover; server_max_window_bits=10; client_max_window_bits=\"12\"",
            ]))
        #expect(agreement.subprotocol == "chat")
        var expected = PerMessageDeflateParameters()
        expected.serverNoContextTakeover = true
        expected.serverMaxWindowBits = 10
        expected.clientMaxWindowBits = 12
        #expect(agreement.compression == expected)
        #expect(try Self.handshake.agreement(with: Self.answer()) == WebSocketHandshake.Agreement())
    }

    @Test(arguments: [
        (["Upgrade": ""], "does not upgrade"),
        (["Connection": "close"], "Connection: Upgrade"),
        (["Sec-WebSocket-Accept": "x3JJHMbDL1EzLkh9GBhXDw=="], "does not match"),
        (["Sec-WebSocket-Protocol": "mqtt"], "mqtt"),
        (["Sec-WebSocket-Extensions": "x-webkit-deflate-frame"], "not offered"),
        (["Sec-WebSocket-Extensions": "permessage-deflate, permessage-deflate"], "not offered"),
        (["Sec-WebSocket-Extensions": "permessage-deflate; server_max_window_bits=16"], "8 to 15"),
        (["Sec-WebSocket-Extensions": "permessage-deflate; server_max_window_bits"], "server_max_window_bits"),
        (
            ["Sec-WebSocket-Extensions": "permessage-deflate; client_no_context_takeover; client_no_context_takeover"],
            "repeated"
        ),
        (["Sec-WebSocket-Extensions": "permessage-deflate; level=9"], "level=9"),
    ])
    func anAnswerOutsideTheOfferIsASerializationErrorNamingIt(fields: [String: String], naming: String) {
        #expect {
            _ = try Self.handshake.agreement(with: Self.answer(fields))
        } throws: { error in
            guard case .serialization(let reason) = error as? ErrandError else { return false }
            return reason.contains(naming)
        }
    }

    @Test func compressionAcceptedWhenNotOfferedIsRefused() {
        var options = WebSocketOptions()
        options.compression = false
        let handshake = WebSocketHandshake(options: options, key: "dGhlIHNhbXBsZSBub25jZQ==")
        #expect(throws: ErrandError.self) {
            _ = try handshake.agreement(with: Self.answer(["Sec-WebSocket-Extensions": "permessage-deflate"]))
        }
    }
}
