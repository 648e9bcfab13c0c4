import Testing

@testable import Errand

/// The public suffix list the jar refuses `Domain` attributes from.
struct PublicSuffixListTests {
    let list = PublicSuffixList.system

    @Test func registrySuffixesArePublicAndNamesUnderThemAreNot() {
        #if os(Linux)
            #expect(list.isComplete, "libpsl, which libcurl depends on, is on every Linux Errand runs on")
        #endif
        for suffix in ["com", "org", "localhost", ""] { #expect(list.isPublicSuffix(suffix), "\(suffix)") }
        for name in ["example.org", "www.example.co.uk", "home.example.org"] {
            #expect(!list.isPublicSuffix(name), "\(name)")
        }
        guard list.isComplete else { return }
        for suffix in ["co.uk", "github.io", "s3.amazonaws.com"] { #expect(list.isPublicSuffix(suffix), "\(suffix)") }
        #expect(!list.isPublicSuffix("foo.github.io"))
    }

    @Test func oddNamesNeitherCrashNorPass() {
        #expect(list.isPublicSuffix("."))
        #expect(list.isPublicSuffix("a\u{0}b.example.org"))
    }
}
