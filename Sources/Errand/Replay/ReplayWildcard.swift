import Foundation

/// Comparisons in which a recorded `<redacted>` (``Redaction``'s placeholder) stands for any
/// value: what a recording masked cannot be compared, so it must not decide a match.
enum ReplayWildcard {
    static var placeholder: String { Redaction.placeholder }

    /// Whether `actual` holds the same fields as `recorded`, in any order, each as many times;
    /// a recorded field whose value is the placeholder takes any value of that name.
    static func fields(
        _ recorded: [(name: String, value: String)], match actual: [(name: String, value: String)]
    ) -> Bool {
        guard recorded.count == actual.count else { return false }
        var unmatched = actual
        var anyValue: [String] = []
        for field in recorded {
            if field.value == placeholder {
                anyValue.append(field.name)
            } else if let index = unmatched.firstIndex(where: { $0 == field }) {
                unmatched.remove(at: index)
            } else {
                return false
            }
        }
        for name in anyValue {
            guard let index = unmatched.firstIndex(where: { $0.name == name }) else { return false }
            unmatched.remove(at: index)
        }
        return true
    }

    /// Whether `actual` is `recorded` with each placeholder in it standing for any text.
    static func text(_ recorded: String, matches actual: String) -> Bool {
        // Equal text matches whatever it holds; looking for the placeholder costs more.
        guard recorded != actual else { return true }
        guard recorded.contains(placeholder) else { return false }
        let pieces = recorded.components(separatedBy: placeholder)
        guard let first = pieces.first, let last = pieces.last, actual.hasPrefix(first) else { return false }
        var rest = actual.dropFirst(first.count)
        for piece in pieces.dropFirst().dropLast() {
            guard let found = rest.range(of: piece) else { return false }
            rest = rest[found.upperBound...]
        }
        return rest.hasSuffix(last)
    }

    /// Whether two JSON values are equal, objects' keys in any order, a recorded string
    /// compared by ``text(_:matches:)``.
    static func json(_ recorded: ReplayJSON, matches actual: ReplayJSON) -> Bool {
        switch (recorded, actual) {
        case (.string(let recorded), .string(let actual)):
            return text(recorded, matches: actual)
        case (.string(let recorded), _):
            return recorded == placeholder
        case (.object(let recorded), .object(let actual)):
            // Fields holding one value first: a difference is found there at the least cost.
            return recorded.count == actual.count
                && recorded.allSatisfy { key, value in
                    value.isContainer || (actual[key].map { json(value, matches: $0) } ?? false)
                }
                && recorded.allSatisfy { key, value in
                    !value.isContainer || (actual[key].map { json(value, matches: $0) } ?? false)
                }
        case (.array(let recorded), .array(let actual)):
            return recorded.count == actual.count && zip(recorded, actual).allSatisfy { json($0, matches: $1) }
        case (.null, .null):
            return true
        case (.number(let recorded), .number(let actual)):
            return recorded.isBoolean == actual.isBoolean && recorded == actual
        default:
            return false
        }
    }
}
