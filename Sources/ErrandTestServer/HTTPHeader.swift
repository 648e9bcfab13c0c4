import Foundation

/// One header line, with the name spelled as the peer sent it.
struct HTTPHeader: Sendable, Equatable {
    var name: String
    /// The value decoded: UTF-8 when it is, else Latin-1.
    var value: String {
        didSet { bytes = nil }
    }
    /// The value's bytes as received when they are not ASCII: decoding cannot be undone, as the
    /// same text can come from UTF-8 or from Latin-1 bytes. `nil` when `value`'s UTF-8 is them.
    private var bytes: [UInt8]?

    init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }

    /// A field as it came off the wire. Values are nominally Latin-1, but clients put UTF-8 in them:
    /// UTF-8 is taken when valid. Only a non-ASCII value keeps its bytes; an ASCII one is its own UTF-8.
    init(_ name: String, received value: ArraySlice<UInt8>) {
        self.name = name
        if let utf8 = String(bytes: value, encoding: .utf8) {
            self.value = utf8
        } else {
            self.value = String(String.UnicodeScalarView(value.map { Unicode.Scalar($0) }))
        }
        bytes = value.allSatisfy { $0 < 0x80 } ? nil : Array(value)
    }

    /// The value exactly as it was on the wire, for a route that compares bytes.
    var valueBytes: [UInt8] {
        bytes ?? Array(value.utf8)
    }
}

extension [HTTPHeader] {
    /// Every value of the header `name` (case-insensitive), in order.
    func values(for name: String) -> [String] {
        let wanted = name.lowercased()
        return filter { $0.name.lowercased() == wanted }.map(\.value)
    }

    /// The first value of the header `name` (case-insensitive).
    func first(_ name: String) -> String? {
        let wanted = name.lowercased()
        return first { $0.name.lowercased() == wanted }?.value
    }

    /// Whether a comma-separated header such as `Connection` lists `token` (case-insensitive).
    func contains(token: String, in name: String) -> Bool {
        values(for: name)
            .flatMap { $0.split(separator: ",") }
            .contains { $0.trimmingCharacters(in: .whitespaces).lowercased() == token }
    }
}
