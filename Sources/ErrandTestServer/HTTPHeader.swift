import Foundation

/// One header line, with the name spelled as the peer sent it.
struct HTTPHeader: Sendable, Equatable {
    var name: String
    var value: String

    init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
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
