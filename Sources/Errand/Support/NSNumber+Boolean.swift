import Foundation

extension NSNumber {
    /// Foundation gives booleans a private `NSNumber` subclass on every platform; a Swift `is Bool`
    /// check cannot tell them apart, since `1` bridges to `true`.
    private static let booleanClass = ObjectIdentifier(type(of: NSNumber(value: true)))

    /// Whether this number is a boolean rather than a `0` or `1`.
    var isBoolean: Bool {
        ObjectIdentifier(type(of: self)) == Self.booleanClass
    }
}
