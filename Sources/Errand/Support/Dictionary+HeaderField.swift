import Foundation

extension Dictionary where Key == String, Value == String {
    /// The value of a header field, its name matched case-insensitively as HTTP requires.
    func headerField(_ name: String) -> String? {
        if let exact = self[name] { return exact }
        return first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}
