import Foundation

/// The http-state parser tests a cookie jar that follows RFC 6265bis (draft-ietf-httpbis-rfc6265bis,
/// latest) fails, each with why: the suite's expectations date from 2011 and RFC 6265, and some
/// name dates that have since passed. Section numbers are the draft's.
///
/// Every other test's expectation is what the draft's §5.1 and §5.6–§5.8 give for the test as the
/// harness serves it.
enum HTTPStateKnownFailures {
    /// The tests that fail at `now`, with the reason for each.
    static func at(_ now: Date) -> [String: String] {
        var failures = contradictions
        for (name, expiry) in expiries where expiry <= now {
            failures[name] = "the cookie it expects expired on \(expiry) (§5.7: an expired cookie is evicted)"
        }
        return failures
    }

    /// When the cookie each of these tests expects expires: after that a jar must not send it.
    /// The suite was written in 2011 with dates in 2019; `0003` was moved to 2027 in 2017.
    static let expiries: [String: Date] = [
        "0002": Date(timeIntervalSince1970: 1_565_165_059),  // Fri, 07 Aug 2019 08:04:19 GMT
        "comma0006": Date(timeIntervalSince1970: 1_565_165_059),
        "comma0007": Date(timeIntervalSince1970: 1_565_165_059),  // `Expires=Fri 07 Aug 2019 08:04:19 GMT, baz=qux`
        "chromium0016": Date(timeIntervalSince1970: 1_808_082_389),  // Sun, 18-Apr-2027 21:06:29 GMT
        "chromium0017": Date(timeIntervalSince1970: 1_808_082_389),
        "0003": Date(timeIntervalSince1970: 1_817_625_859),  // Fri, 07 Aug 2027 08:04:19 GMT
    ]

    /// Why a nameless cookie is sent: RFC 6265 ignored a cookie without a name; the draft keeps it.
    private static let nameless =
        "expects a nameless cookie to be ignored, as RFC 6265 §5.2 said; RFC 6265bis §5.6 step 3 makes"
        + " `token` and `=token` a cookie with an empty name, §5.7 step 2 rejects only an empty name and value"
        + " both, and §5.8.3 step 6 sends it as its value alone"

    /// Tests whose expectation the draft's text contradicts, or that no transport can carry.
    static let contradictions: [String: String] = [
        "disabled-chromium0022":
            "its Set-Cookie holds a NUL, which libcurl refuses (\"Nul byte in header\"), so no answer arrives;"
            + " RFC 6265bis §5.6 step 1 would ignore that Set-Cookie anyway, not send `AAA=BB`",
        "disabled-chromium0023":
            "expects `AAA=BB` from `AAA=BB<CR>ZYX`; RFC 6265bis §5.6 step 1 ignores a set-cookie-string with a"
            + " CTL other than HTAB entirely",
        "disabled-path0029":
            "expects the cookie of Path `/cookie-parser-result/foo/bar` at `/cookie-parser-result/f%6Fo/bar`;"
            + " RFC 6265bis §5.1.4 path-match compares the paths as they are, not percent-decoded",
        "optional-domain0042":
            "expects no cookie from `domain=foo.example.org; domain=`; RFC 6265bis §5.6.3 keeps an empty Domain"
            + " (RFC 6265 §5.2.3 said to ignore it), so by §5.7 steps 7 and 10 the last, empty one makes a"
            + " host-only cookie of home.example.org, which is sent",
        "0004": nameless,  // `foo`
        "0021": nameless,  // `=x` between `a=b` and `c=d`
        "0023": nameless,  // `foo`, then an empty Set-Cookie
        "0024": nameless,  // `foo`, then `=`
        "0025": nameless,  // `foo`, then `; bar`
        "0026": nameless,  // `foo`, then spaces
        "0027": nameless,  // `foo`, then `bar`, which replaces it
        "0028": nameless,  // `foo`, then a tab; the expected file names two `Cookie:`, so none
        "chromium0009": nameless,  // `BLAHHH; path=/;`
        "chromium0010": nameless,  // `"BLA\"HHH"; path=/;`
        "chromium0012": nameless,  // `=ABC`
        "mozilla0012": nameless,  // `five; max-age=2.63,` after `test=…`
        "mozilla0014": nameless,  // `six`
        "mozilla0015": nameless,  // `six`, `seven`
        "mozilla0016": nameless,  // `six`, `seven`, ` =eight`
        "mozilla0017": nameless,  // the same, then `test=six`
        "name0017": nameless,  // `=a=bar`
        "name0023": nameless,  // `foo;bar=baz`
        "name0025": nameless,  // `===a=bar`
        "name0028": nameless,  // `=a`
        "name0031": nameless,  // `"foo;bar"=baz`: the name-value pair ends at the `;`
        "name0032": nameless,  // `"foo\"bar;baz"=qux`
        "name0033": nameless,  // `=foo=bar`, then `aaa`
    ]
}
