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
        guard recorded.contains(placeholder) else { return recorded == actual }
        let pieces = recorded.components(separatedBy: placeholder)
        guard let first = pieces.first, let last = pieces.last, actual.hasPrefix(first) else { return false }
        var rest = actual.dropFirst(first.count)
        for piece in pieces.dropFirst().dropLast() {
            guard let found = rest.range(of: piece) else { return false }
            rest = rest[found.upperBound...]
        }
        return rest.hasSuffix(last)
    }

    /// Whether two parsed JSON values are equal, objects' keys in any order, a recorded string
    /// compared by ``text(_:matches:)``.
    static func json(_ recorded: Any, matches actual: Any) -> Bool {
        switch (recorded, actual) {
        case (let recorded as String, let actual as String):
            return text(recorded, matches: actual)
        case (let recorded as String, _):
            return recorded == placeholder
        case (let recorded as [String: Any], let actual as [String: Any]):
            return recorded.count == actual.count
                && recorded.allSatisfy { key, value in actual[key].map { json(value, matches: $0) } ?? false }
        case (let recorded as [Any], let actual as [Any]):
            return recorded.count == actual.count && zip(recorded, actual).allSatisfy { json($0, matches: $1) }
        case (is NSNull, is NSNull):
            return true
        case (let recorded as NSNumber, let actual as NSNumber):
            return recorded.isBoolean == actual.isBoolean && recorded == actual
        default:
            return false
        }
    }
}
