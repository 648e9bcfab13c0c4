import Foundation

/// What ``ReplayTransport`` does with a request its recording holds no exchange for.
public enum ReplayMiss: Sendable {
    /// Fail the request with ``ErrandError/transport(_:)`` carrying
    /// `URLError(.resourceUnavailable)`, whose description names the method and URL and the
    /// hosts the recording does hold: a test that wandered off its recording says where.
    case fail
    /// Send the request through `transport` instead, as if no recording were there.
    case passThrough(any Transport)
    /// Send the request through `transport` and add the exchange to the recording, in memory
    /// (the next such request replays it) and in the file at `into`, before the request
    /// completes. Record once against the real API, then run offline from the file.
    /// Headers named by ``Redaction/default`` are masked as ``HARRecorder`` masks them; bodies
    /// are recorded whole up to 64 MiB. A longer response body (an endless stream) is recorded
    /// cut there, its entry saying so and its full size, and replaying that entry fails with
    /// ``ErrandError/decoding(_:)`` rather than serving the cut body as if whole. A request that
    /// gets no response is not recorded. The file need not exist yet.
    ///
    /// The first exchange writes the file whole, atomically; each later one is appended in place
    /// (only the file's last few bytes are rewritten), so recording a session costs the bytes of
    /// its exchanges, not the file's size for each. Between exchanges the file is always a
    /// complete HAR; should someone else write it meanwhile, the next exchange writes it whole
    /// again from what the recording holds.
    case record(via: any Transport, into: URL)
}
