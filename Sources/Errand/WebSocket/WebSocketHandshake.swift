import CErrandZlib
import Foundation

/// The opening handshake's two halves (RFC 6455 §4): the header fields the upgrade request
/// carries, and the checks a `101 Switching Protocols` answer must pass — the accept key, the
/// upgrade, and only a subprotocol and extension the client offered.
package struct WebSocketHandshake: Sendable {
    /// What the server agreed to.
    package struct Agreement: Sendable, Equatable {
        package var subprotocol: String?
        /// The permessage-deflate parameters, when the server accepted compression.
        package var compression: PerMessageDeflateParameters?
    }

    /// The GUID RFC 6455 appends to the key before hashing it.
    private static let keyGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// `Sec-WebSocket-Key`: 16 random bytes in base64, new for each handshake.
    package let key: String
    package let options: WebSocketOptions
    /// Whether permessage-deflate is offered: asked for, and zlib is there to do it.
    package let offersCompression: Bool

    package init(
        options: WebSocketOptions,
        key: String = Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
    ) {
        self.options = options
        self.key = key
        offersCompression = options.compression && errand_zlib_load() != 0
    }

    /// Checks what the caller asked to offer: each subprotocol a token (RFC 6455 §4.1), none twice.
    /// - Throws: ``ErrandError/serialization(_:)`` naming the subprotocol, before anything is sent.
    package func checkOffer() throws(ErrandError) {
        var seen: Set<String> = []
        for subprotocol in options.subprotocols {
            guard HeaderFieldCheck.isToken(subprotocol) else {
                throw .serialization(
                    "the WebSocket subprotocol \"\(subprotocol)\" is not a token (RFC 6455 §4.1): letters, digits and !#$%&'*+-.^_`|~ only"
                )
            }
            guard seen.insert(subprotocol).inserted else {
                throw .serialization("the WebSocket subprotocol \"\(subprotocol)\" is offered twice")
            }
        }
    }

    /// The header fields of the upgrade request, beside the request's own.
    var headerFields: [(name: String, value: String)] {
        var fields = [
            ("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Key", key),
            ("Sec-WebSocket-Version", "13"),
        ]
        if !options.subprotocols.isEmpty {
            fields.append(("Sec-WebSocket-Protocol", options.subprotocols.joined(separator: ", ")))
        }
        if offersCompression {
            fields.append(("Sec-WebSocket-Extensions", PerMessageDeflateParameters.offer))
        }
        return fields.map { (name: $0.0, value: $0.1) }
    }

    /// How a handshake fails on a transport that cannot open WebSockets, naming the one that can.
    static func unsupported(by transport: String) -> ErrandError {
        .transport(
            URLError(
                .unsupportedURL,
                userInfo: [NSLocalizedDescriptionKey: "\(transport) cannot open WebSockets here; CurlTransport can"]))
    }

    /// The `Sec-WebSocket-Accept` a server must answer `key` with.
    package static func acceptValue(for key: String) -> String {
        Data(SHA1.digest(Array((key + keyGUID).utf8))).base64EncodedString()
    }

    /// What a `101` answer agreed to.
    /// - Throws: ``ErrandError/serialization(_:)`` naming what does not match the offer.
    package func agreement(with response: Response) throws(ErrandError) -> Agreement {
        guard response.value(forHeader: "Upgrade")?.trimmed.equalsIgnoringASCIICase("websocket") == true else {
            throw .serialization("the WebSocket handshake's answer does not upgrade to websocket")
        }
        let connection = response.value(forHeader: "Connection") ?? ""
        guard connection.split(separator: ",").contains(where: { $0.trimmed.equalsIgnoringASCIICase("upgrade") }) else {
            throw .serialization("the WebSocket handshake's answer has no Connection: Upgrade")
        }
        guard response.value(forHeader: "Sec-WebSocket-Accept")?.trimmed == Self.acceptValue(for: key) else {
            throw .serialization("the WebSocket handshake's Sec-WebSocket-Accept does not match the key sent")
        }
        var agreement = Agreement()
        if let chosen = response.value(forHeader: "Sec-WebSocket-Protocol")?.trimmed, !chosen.isEmpty {
            guard options.subprotocols.contains(chosen) else {
                throw .serialization("the server chose the subprotocol \"\(chosen)\", which was not offered")
            }
            agreement.subprotocol = chosen
        }
        if let extensions = response.value(forHeader: "Sec-WebSocket-Extensions"), !extensions.trimmed.isEmpty {
            agreement.compression = try PerMessageDeflateParameters(accepted: extensions, offered: offersCompression)
        }
        return agreement
    }
}
