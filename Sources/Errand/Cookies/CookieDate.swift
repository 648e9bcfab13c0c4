import Foundation

// Placeholder until the date algorithm lands.
package enum CookieDate {
    package static func parse(_ value: Substring) -> Date? { HTTPDate.parse(value) }
}
