import Foundation

/// Replaces known secret values wherever they occur, in text or bytes: the safety net behind
/// masking by name, for a value quoted where no name says so — an echoing server's body, an
/// error's description. Values shorter than four characters are left alone: replacing every
/// `1` would mangle the file and hide nothing.
struct HARScrubber: Sendable {
    let secrets: [String]
    private let needles: [Data]
    private static let placeholder = Data(Redaction.placeholder.utf8)

    init(_ secrets: [String]) {
        self.secrets = secrets
        // Longest first, so a value containing another is replaced whole.
        needles = Set(secrets.map { $0.trimmingCharacters(in: .whitespaces) })
            .filter { $0.count >= 4 && $0 != Redaction.placeholder }
            .sorted { $0.utf8.count > $1.utf8.count }
            .map { Data($0.utf8) }
    }

    func text(_ text: String) -> String {
        guard !needles.isEmpty else { return text }
        return String(decoding: data(Data(text.utf8)), as: UTF8.self)
    }

    func data(_ data: Data) -> Data {
        var data = data
        for needle in needles {
            guard data.range(of: needle) != nil else { continue }
            var result = Data()
            var rest = data.startIndex
            while let found = data.range(of: needle, in: rest..<data.endIndex) {
                result += data[rest..<found.lowerBound]
                result += Self.placeholder
                rest = found.upperBound
            }
            result += data[rest...]
            data = result
        }
        return data
    }
}
