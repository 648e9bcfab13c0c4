// Placeholder until the libpsl loader lands.
package struct PublicSuffixList: Sendable {
    package static let system = PublicSuffixList()
    package func isPublicSuffix(_ domain: String) -> Bool { !domain.contains(".") }
}
