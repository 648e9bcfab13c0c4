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
    /// (the next such request replays it) and in the file at `into`, rewritten atomically before
    /// the request completes. Record once against the real API, then run offline from the file.
    /// Headers named by ``Redaction/default`` are masked as ``HARRecorder`` masks them; bodies
    /// are recorded whole up to 64 MiB. A request that gets no response is not recorded. The
    /// file need not exist yet.
    case record(via: any Transport, into: URL)
}
