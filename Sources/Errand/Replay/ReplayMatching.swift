/// How ``ReplayTransport`` finds the recorded exchange that answers a request.
///
/// Headers are never compared: they carry dates, tokens and client versions that change from
/// run to run. Where a recording holds `<redacted>` (what ``Redaction`` wrote for a masked value)
/// any value matches.
public enum ReplayMatching: Sendable, Equatable {
    /// The same method and URL. Scheme and host compare ignoring case, a default port equals
    /// none, the path compares percent-decoded, and query items compare in any order (though
    /// each the same number of times). The fragment is ignored.
    case methodAndURL
    /// As ``methodAndURL``, and the same body: JSON compared as values (key order and spacing
    /// ignored), form-encoded fields in any order, any other body byte for byte. A recorded body
    /// that was truncated matches a body that starts with it; an entry whose body was not
    /// recorded (streamed, or left out by a browser) matches any body, and a request whose body
    /// is a ``BodyStream``, which cannot be read twice, matches on method and URL alone.
    case methodURLAndBody
}
