import Foundation

/// Python's `int()` and `float()` on text, which httpbin applies to query parameters and
/// headers: what they accept decides whether httpbin answers or fails with a 500.
enum PythonNumber {
    /// `int(text)`: surrounding whitespace, a sign, `_` between digits; `nil` where Python
    /// raises. Python's integers have no limit, so a larger value comes back as `Int.max`/`Int.min`.
    static func int(_ text: some StringProtocol) -> Int? {
        var digits = Substring(text.trimmingCharacters(in: .whitespacesAndNewlines))
        let negative = digits.first == "-"
        if digits.first == "-" || digits.first == "+" { digits = digits.dropFirst() }
        guard let first = digits.first, isDigit(first), digits.allSatisfy({ isDigit($0) || $0 == "_" }),
            underscoresBetweenDigits(digits)
        else {
            return nil
        }
        guard let magnitude = Int(digits.filter { $0 != "_" }) else { return negative ? Int.min : Int.max }
        return negative ? -magnitude : magnitude
    }

    /// `float(text)`: decimal or exponent notation, `inf`, `nan`, `_` between digits; `nil`
    /// where Python raises.
    static func float(_ text: some StringProtocol) -> Double? {
        let trimmed = Substring(text.trimmingCharacters(in: .whitespacesAndNewlines))
        // Swift also reads hexadecimal floats, which Python's float() rejects.
        guard !trimmed.contains(where: { $0 == "x" || $0 == "X" }), underscoresBetweenDigits(trimmed) else {
            return nil
        }
        return Double(trimmed.filter { $0 != "_" })
    }

    private static func isDigit(_ character: Character) -> Bool {
        character.isASCII && character.isNumber
    }

    private static func underscoresBetweenDigits(_ text: Substring) -> Bool {
        let characters = Array(text)
        return characters.indices.allSatisfy { index in
            characters[index] != "_"
                || (index > 0 && index + 1 < characters.count
                    && isDigit(characters[index - 1]) && isDigit(characters[index + 1]))
        }
    }
}
