import Foundation
import Testing

@testable import Errand

/// `Cache-Control` as RFC 9111 §5.2 asks a cache to read it, with the cases of cache-tests.fyi's
/// `cc-parse` where the RFC decides them.
@Suite("Cache-Control: directives, arguments and what is malformed")
struct CacheControlTests {
    @Test func directivesReadInAnyCaseWithTokenOrQuotedArguments() {
        let control = CacheControl(#"Max-Age=60, NO-CACHE, private="Set-Cookie, X-Id", ext="a \"b\" c""#)
        #expect(control.seconds("max-age") == 60)
        #expect(control.contains("no-cache"))
        #expect(control.argument(of: "no-cache") == nil)
        #expect(control.argument(of: "private") == "Set-Cookie, X-Id")
        #expect(control.argument(of: "ext") == #"a "b" c"#)
        #expect(!control.contains("x-id"))
    }

    @Test(arguments: [
        ("max-age=3600", 3600, "a token"),
        (#"max-age="3600""#, 3600, "quoted: recipients accept both forms (§5.2)"),
        ("max-age=003600", 3600, "leading zeros"),
        ("max-age=2147483647", 2_147_483_647, "2³¹ − 1"),
        ("max-age=2147483648", 2_147_483_648, "2³¹"),
        ("max-age=99999999999999999999999999", 2_147_483_648, "more than a cache can hold reads as 2³¹ (§1.2.2)"),
        ("max-age='3600'", 0, "single quotes are part of the token: not a number"),
        ("max-age=3600.0", 0, "a decimal is not delta-seconds: stale (§4.2.1)"),
        ("max-age=3600a", 0, "trailing letters"),
        ("max-age=a3600", 0, "leading letters"),
        ("max-age=-1", 0, "negative"),
        ("max-age", 0, "no argument"),
        (#"max-age="""#, 0, "an empty quoted argument"),
        ("max-age=1800, max-age=1", 1800, "the first of two counts (§4.2.1)"),
        ("max-age=1, max-age=1800", 1, "the first of two counts (§4.2.1)"),
        (#"extension="max-age=3600", max-age=1"#, 1, "a max-age inside quotes is no directive"),
        (#"max-age=1, extension="max-age=3600""#, 1, "a max-age inside quotes is no directive"),
        (" ,, max-age=60 ,\t, ", 60, "empty members and whitespace"),
        ("public,max-age=60", 60, "no space after the comma"),
    ])
    func maxAge(field: String, seconds: Int, why: String) {
        #expect(CacheControl(field).seconds("max-age") == seconds, "\(why)")
    }

    @Test(arguments: [
        ("max-age =3600", "a space before ="),
        ("max-age= 3600", "a space after ="),
        (#"max-age="3600"#, "a quote that never ends"),
        ("max-age=36 00", "a space inside the argument"),
        ("max-age=(3600)", "a separator in a token"),
        ("=3600", "no name"),
    ])
    func aMalformedMemberIsNoDirective(field: String, why: String) {
        #expect(CacheControl(field).seconds("max-age") == nil, "\(why)")
    }

    @Test func aMalformedMemberLeavesTheOthers() {
        let control = CacheControl(#"max-age =60, no-store, a="b"c, must-revalidate, x="unterminated, private"#)
        #expect(control.directives.map(\.name) == ["no-store", "must-revalidate"])
    }

    @Test func nothingAndNilHaveNoDirectives() {
        #expect(CacheControl(nil).directives.isEmpty)
        #expect(CacheControl("").directives.isEmpty)
        #expect(CacheControl(" , ,").directives.isEmpty)
    }

    /// cache-tests.fyi `age-parse-*`: the first value, and only whole non-negative numbers.
    @Test(arguments: [
        ("0", 0), ("7200", 7200), ("7200, 0", 7200), ("0, 7200", 0), (" 60 ", 60),
        ("2147483649", 2_147_483_648),
    ])
    func ageTakesTheFirstValue(field: String, age: Int) {
        #expect(ResponseFreshness.age(["Age": field]) == age)
    }

    @Test(arguments: ["abc", "-7200", "7200.0", "7200;foo=bar", ""])
    func anAgeThatIsNoNumberIsIgnored(field: String) {
        #expect(ResponseFreshness.age(["age": field]) == nil)
    }
}
