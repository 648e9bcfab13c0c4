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

    /// Reads the server's `Sec-WebSocket-Extensions` answer to ``offer``.
    /// - Throws: ``ErrandError/serialization(_:)`` for an extension not offered (any, when
    ///   `offered` is `false`), more than one, or a parameter unknown, repeated or out of range.
    init(accepted field: String, offered: Bool) throws(ErrandError) {
        let extensions = field.split(separator: ",").map { $0.trimmed }.filter { !$0.isEmpty }
        guard offered, extensions.count == 1, let accepted = extensions.first else {
            throw .serialization("the server agreed to the WebSocket extension(s) \"\(field)\", which were not offered")
        }
        var parts = accepted.split(separator: ";").map { $0.trimmed }
        guard parts.removeFirst().equalsIgnoringASCIICase("permessage-deflate") else {
            throw .serialization("the server agreed to the WebSocket extension \"\(accepted)\", which was not offered")
        }
        var seen: Set<String> = []
        for part in parts {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmed }
            let name = pair[0].lowercased()
            let value = pair.count > 1 ? String(pair[1].trimmingCharacters(in: ["\""])) : nil
            guard seen.insert(name).inserted else {
                throw .serialization("the server repeated the permessage-deflate parameter \(name)")
            }
            switch (name, value) {
            case ("server_no_context_takeover", nil): serverNoContextTakeover = true
            case ("client_no_context_takeover", nil): clientNoContextTakeover = true
            case ("server_max_window_bits", let bits?): serverMaxWindowBits = try Self.windowBits(bits, name)
            case ("client_max_window_bits", let bits?): clientMaxWindowBits = try Self.windowBits(bits, name)
            default:
                throw .serialization("the server answered permessage-deflate with the parameter \"\(part)\"")
            }
        }
    }

    private static func windowBits(_ text: String, _ name: String) throws(ErrandError) -> Int {
        guard text.count <= 2, text.allSatisfy(\.isASCII), let bits = Int(text), (8...15).contains(bits) else {
            throw .serialization("the server answered permessage-deflate with \(name)=\(text); 8 to 15 are allowed")
        }
        return bits
    }
}
