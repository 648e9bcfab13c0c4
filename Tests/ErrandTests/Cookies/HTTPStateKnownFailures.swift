import Foundation

/// The http-state parser tests a cookie jar that follows RFC 6265bis (draft-ietf-httpbis-rfc6265bis,
/// latest) fails, each with why: the suite's expectations date from 2011 and RFC 6265, and some
/// name dates that have since passed. Section numbers are the draft's.
///
/// Every other test's expectation is what the draft's §5.1 and §5.6–§5.8 give for the test as the
/// harness serves it — but for a `Set-Cookie` without a name, which the jar ignores as RFC 6265
/// §5.2 and every non-browser client do (the draft keeps it, as browsers do), and a request path
/// that percent-encodes an unreserved character, which RFC 3986 §6.2.2.2 makes the same path.
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

    /// Tests whose expectation the draft's text contradicts, or that no transport can carry.
    static let contradictions: [String: String] = [
        "disabled-chromium0022":
            "its Set-Cookie holds a NUL, which libcurl refuses (\"Nul byte in header\"), so no answer arrives;"
            + " RFC 6265bis §5.6 step 1 would ignore that Set-Cookie anyway, not send `AAA=BB`",
        "disabled-chromium0023":
            "expects `AAA=BB` from `AAA=BB<CR>ZYX`; RFC 6265bis §5.6 step 1 ignores a set-cookie-string with a"
            + " CTL other than HTAB entirely, as browsers now do",
    ]
}
