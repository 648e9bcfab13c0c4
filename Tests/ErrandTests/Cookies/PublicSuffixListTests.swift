import Testing

@testable import Errand

/// The public suffix list the jar refuses `Domain` attributes from.
struct PublicSuffixListTests {
    let list = PublicSuffixList.system

    @Test func theSystemListIsLoadedOnLinux() {
        #if os(Linux)
            #expect(list.isComplete, "libpsl, which libcurl depends on, is on every Linux Errand runs on")
        #else
            #expect(!list.isComplete, "Apple platforms have no libpsl")
        #endif
    }

    @Test func registrySuffixesArePublicAndNamesUnderThemAreNot() {
        for suffix in ["com", "org", "uk"] { #expect(list.isPublicSuffix(suffix), "\(suffix)") }
        for name in ["example.org", "www.example.co.uk", "home.example.org", "foo.github.io"] {
            #expect(!list.isPublicSuffix(name), "\(name)")
        }
        guard list.isComplete else { return }
        // ICANN entries, private ones, wildcard ones and punycode ones (公司.cn).
        for suffix in ["co.uk", "github.io", "s3.amazonaws.com", "xxx.ck", "xn--55qx5d.cn"] {
            #expect(list.isPublicSuffix(suffix), "\(suffix)")
        }
        #expect(!list.isPublicSuffix("www.ck"), "an exception to *.ck")
    }

    @Test func aSingleLabelIsASuffixWhetherListedOrNot() {
        // RFC 6265bis §2.3 takes "example" as the public suffix of www.site.example.
        for label in ["localhost", "example", "invalid", "internal", "intranet"] {
            #expect(list.isPublicSuffix(label), "\(label)")
        }
        for name in ["foo.localhost", "site.example", "com.invalid", "printer.internal"] {
            #expect(!list.isPublicSuffix(name), "\(name)")
        }
    }

    @Test func trailingDotsNameTheSameDomain() {
        #expect(list.isPublicSuffix("com."))
        #expect(!list.isPublicSuffix("example.org."))
        guard list.isComplete else { return }
        #expect(list.isPublicSuffix("co.uk."))
        #expect(list.isPublicSuffix("github.io.."))
    }

    @Test func oddNamesNeitherCrashNorPass() {
        for name in ["", ".", "..", "a\u{0}b.example.org", "example.org\u{0}"] {
            #expect(list.isPublicSuffix(name), "\(name.debugDescription)")
        }
        #expect(!list.isPublicSuffix(String(repeating: "a.", count: 5_000) + "example.org"))
    }
}
