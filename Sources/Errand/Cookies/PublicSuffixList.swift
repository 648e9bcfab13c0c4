import CErrandPSL

/// Which domains are public suffixes (`com`, `co.uk`, `github.io`), under which anyone may
/// register a name: a cookie may not claim one as its `Domain` (RFC 6265bis §5.7, step 9).
///
/// The list is the system's libpsl's, loaded at run time — the newer of its built-in list and the
/// distribution's file — so it follows the system's updates. Where libpsl cannot be loaded
/// (Apple platforms, a minimal Linux image), only single-label names count as suffixes, which
/// refuses `Domain=com` but not `Domain=co.uk`.
package struct PublicSuffixList: Sendable {
    /// The system's list.
    package static let system = PublicSuffixList()

    /// Whether the full list was loaded, rather than the single-label rule.
    package var isComplete: Bool { errand_psl_load() == 1 }

    /// Whether `domain` (lowercased, no trailing dot) is a public suffix; a name under no known
    /// suffix (`localhost`, `internal`) counts as one, as browsers count it.
    package func isPublicSuffix(_ domain: String) -> Bool {
        guard !domain.isEmpty, !domain.utf8.contains(0) else { return true }
        switch errand_psl_is_public_suffix(domain) {
        case 1: return true
        case 0: return false
        default: return !domain.contains(".")
        }
    }
}
