import CErrandPSL

/// Which domains are public suffixes (`com`, `co.uk`, `github.io`), under which anyone may
/// register a name: a cookie may not claim one as its `Domain` (RFC 6265bis §5.7, step 9).
///
/// On Linux the list is the system's libpsl's, loaded at run time — the newer of its built-in
/// list and the distribution's file — so it follows the system's updates. Where libpsl cannot be
/// loaded (always on Apple platforms; a minimal Linux image), only single-label names count as
/// suffixes, which refuses `Domain=com` but not `Domain=co.uk`: ``isComplete`` tells which.
package struct PublicSuffixList: Sendable {
    /// The system's list, loaded on first use and kept for the life of the process.
    package static let system = PublicSuffixList()

    /// Whether the full list was loaded, rather than the single-label rule alone.
    package let isComplete: Bool

    private init() {
        isComplete = errand_psl_load() == 1
    }

    /// Whether `domain` (lowercased ASCII, international labels in punycode) is a public suffix;
    /// trailing dots are ignored.
    ///
    /// A single label is one whether the list names it or not: the draft's own example takes
    /// `example` as the public suffix of `www.site.example`, so `localhost` and `internal` are
    /// suffixes too, and the answer is the same with or without libpsl. An empty name, and one
    /// that a C string would cut short, count as suffixes, so no cookie is scoped to them.
    package func isPublicSuffix(_ domain: String) -> Bool {
        // A trailing dot names the same domain, and libpsl would match no entry with one.
        var name = Substring(domain)
        while name.utf8.last == UInt8(ascii: ".") { name = Substring(name.utf8.dropLast()) }
        guard name.utf8.contains(UInt8(ascii: ".")), !name.utf8.contains(0) else { return true }
        guard isComplete else { return false }
        let lookedUp = name.endIndex == domain.endIndex ? domain : String(name)
        return lookedUp.withCString { errand_psl_is_public_suffix($0) } == 1
    }
}
