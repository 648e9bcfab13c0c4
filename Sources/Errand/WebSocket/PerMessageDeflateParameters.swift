/// What a server agreed to for permessage-deflate (RFC 7692 §7.1): the window sizes each side
/// compresses with, and whether each side starts every message with a fresh context.
package struct PerMessageDeflateParameters: Sendable, Equatable {
    /// The server starts each message's compression afresh: the client may reset its inflater.
    package var serverNoContextTakeover = false
    /// The client must start each message's compression afresh.
    package var clientNoContextTakeover = false
    /// The base-2 logarithm of the window the server compresses with, 8–15.
    package var serverMaxWindowBits = 15
    /// The base-2 logarithm of the window the client may compress with, 8–15.
    package var clientMaxWindowBits = 15

    /// The client's offer: permessage-deflate, letting the server limit the client's window.
    static let offer = "permessage-deflate; client_max_window_bits"

    package init() {}

    /// Reads the server's `Sec-WebSocket-Extensions` answer to ``offer``: one extension, its name
    /// and each parameter an HTTP token, a value a token or a quoted token (RFC 6455 §9.1).
    /// - Throws: ``ErrandError/serialization(_:)`` naming the field, for an extension not offered
    ///   (any, when `offered` is `false`), more than one, anything not well formed, or a parameter
    ///   unknown, repeated or out of range.
    package init(accepted field: String, offered: Bool) throws(ErrandError) {
        let extensions = field.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmed }
        guard offered, extensions.count == 1, let accepted = extensions.first, !accepted.isEmpty else {
            throw Self.refusal(field, "agrees to extensions that were not offered")
        }
        let parts = accepted.split(separator: ";", omittingEmptySubsequences: false).map { $0.trimmed }
        guard let name = parts.first, HeaderFieldCheck.isToken(name) else {
            throw Self.refusal(field, "is not an extension")
        }
        guard name.equalsIgnoringASCIICase("permessage-deflate") else {
            throw Self.refusal(field, "agrees to \(name), which was not offered")
        }
        var seen: Set<String> = []
        for part in parts.dropFirst() {
            let pair = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map { $0.trimmed }
            guard let rawName = pair.first, HeaderFieldCheck.isToken(rawName) else {
                throw Self.refusal(field, "has a parameter that is not a token: \"\(part)\"")
            }
            let parameter = rawName.lowercased()
            var value: String?
            if pair.count == 2 {
                value = Self.unquoted(pair[1])
                guard let value, HeaderFieldCheck.isToken(value) else {
                    throw Self.refusal(field, "gives \(parameter) a value that is not a token")
                }
            }
            guard seen.insert(parameter).inserted else { throw Self.refusal(field, "has \(parameter) repeated") }
            switch (parameter, value) {
            case ("server_no_context_takeover", nil): serverNoContextTakeover = true
            case ("client_no_context_takeover", nil): clientNoContextTakeover = true
            case ("server_max_window_bits", let bits?):
                serverMaxWindowBits = try Self.windowBits(bits, parameter, field)
            case ("client_max_window_bits", let bits?):
                clientMaxWindowBits = try Self.windowBits(bits, parameter, field)
            default: throw Self.refusal(field, "answers permessage-deflate with \"\(part)\"")
            }
        }
    }

    /// `text` without the double quotes around it, if it has them; `nil` for a lone quote.
    private static func unquoted(_ text: String) -> String? {
        guard text.hasPrefix("\"") || text.hasSuffix("\"") else { return text }
        guard text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") else { return nil }
        return String(text.dropFirst().dropLast())
    }

    private static func refusal(_ field: String, _ what: String) -> ErrandError {
        .serialization("the WebSocket handshake's Sec-WebSocket-Extensions \"\(field)\" \(what)")
    }

    private static func windowBits(_ text: String, _ name: String, _ field: String) throws(ErrandError) -> Int {
        guard text.utf8.count <= 2, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let bits = Int(text),
            (8...15).contains(bits)
        else {
            throw refusal(field, "gives \(name)=\(text); 8 to 15 are allowed")
        }
        return bits
    }
}
