import Foundation

/// Header values are compared without the spaces around them.
extension StringProtocol {
    var trimmed: String { trimmingCharacters(in: .whitespaces) }
}
