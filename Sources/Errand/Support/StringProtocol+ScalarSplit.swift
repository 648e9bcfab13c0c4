/// HTTP's separators are split on as Unicode scalars, as every HTTP parser reads them.
extension StringProtocol {
    /// The pieces between occurrences of `separator`, found scalar by scalar. `split(separator:)`
    /// compares Characters, and a combining mark right after a separator (`=` then U+07AA) makes
    /// one Character of both, so it would not split there, though a server or a browser does.
    func splitScalars(
        _ separator: Unicode.Scalar, maxSplits: Int = .max, omittingEmptySubsequences: Bool = true
    ) -> [Substring] {
        String(self).unicodeScalars.split(
            separator: separator, maxSplits: maxSplits, omittingEmptySubsequences: omittingEmptySubsequences
        ).map { Substring($0) }
    }
}
