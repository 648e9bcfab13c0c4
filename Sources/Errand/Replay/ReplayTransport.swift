import Foundation

/// A ``Transport`` that answers from an HTTP Archive (HAR): record a session against the real
/// API once, with ``HARRecorder`` or ``ReplayMiss/record(via:into:)``, then run the tests offline
/// from the file, which never drifts as a test server does.
///
/// ```swift
/// let replay = try ReplayTransport(har: Bundle.module.url(forResource: "session", withExtension: "har")!)
/// let agent = NetworkAgent(transport: replay)
/// ```
///
/// Each request is answered by the recorded exchange with the same method and URL (and body,
/// when `matching` is ``ReplayMatching/methodURLAndBody``); see ``ReplayMatching`` for how they
/// compare. Entries that match the same request answer in recorded order, one per request, and
/// the last of them answers again once all have. An entry recorded with status `0` (no response
/// arrived) replays as `URLError(.networkConnectionLost)`, and one whose response body was
/// recorded cut short (its comment says "Truncated from …") fails with ``ErrandError/decoding(_:)``
/// naming it, rather than answering with part of a body. A recorded redirect whose target the
/// recording holds is followed, as the network would; the response is the target's. Files from
/// browsers' network panels, mitmproxy and Charles replay too: their bodies are recorded
/// decoded, so `Content-Encoding` and `Content-Length` are left out of the replayed headers.
///
/// Answers are delivered at once, before ``send(_:events:)`` returns, at about a cache hit's
/// cost. An entry for a host no request goes to is simply never used; a miss's error lists the
/// hosts the recording holds, so a test pointed at the wrong `baseUrl` says so.
public final class ReplayTransport: Transport {
    private let source: String
    private let matching: ReplayMatching
    private let index: ReplayIndex
    private let miss: Miss
    private let redirectPolicy = RedirectPolicy()

    /// ``ReplayMiss`` with the recording's state made.
    private enum Miss {
        case fail
        case passThrough(any Transport)
        case record(ReplayRecording)
    }

    /// Reads the recording at `har`.
    ///
    /// - Parameters:
    ///   - har: The HAR file. With ``ReplayMiss/record(via:into:)`` into the same file, it need
    ///     not exist yet: a first run records everything.
    ///   - matching: How requests find their entries. Default ``ReplayMatching/methodAndURL``.
    ///   - onMissing: What a request the recording lacks gets. Default ``ReplayMiss/fail``.
    /// - Throws: ``ErrandError/fileSystem(_:)`` when a file cannot be read;
    ///   ``ErrandError/decoding(_:)`` when it is not HAR — not JSON, a required field missing —
    ///   or an entry cannot be replayed (a URL that is not absolute, base64 that does not
    ///   decode), naming the file, the entry and what is wrong.
    public convenience init(
        har: URL, matching: ReplayMatching = .methodAndURL, onMissing: ReplayMiss = .fail
    ) throws(ErrandError) {
        try self.init(
            har: har, matching: matching, onMissing: onMissing, recordedBodyLimit: ReplayRecording.maximumBodySize)
    }

    /// As the public initializer; `recordedBodyLimit` is the bytes of each body ``ReplayMiss/record(via:into:)``
    /// keeps (64 MiB), smaller in tests.
    init(
        har: URL, matching: ReplayMatching, onMissing: ReplayMiss, recordedBodyLimit: Int
    ) throws(ErrandError) {
        source = har.path
        self.matching = matching
        let archive = try Self.archive(at: har, mayBeMissing: onMissing.recordsInto(har))
        index = ReplayIndex(try Self.entries(of: archive, in: har.path), matching: matching)
        switch onMissing {
        case .fail:
            miss = .fail
        case .passThrough(let transport):
            miss = .passThrough(transport)
        case .record(let transport, let file):
            let recorded = onMissing.recordsInto(har) ? archive : try Self.archive(at: file, mayBeMissing: true)
            miss = .record(
                ReplayRecording(
                    via: transport, into: file, archive: recorded, index: index, maximumBodySize: recordedBodyLimit))
        }
    }

    /// Answers `request` from the recording, or as `onMissing` says; see ``Transport/send(_:events:)``.
    public func send(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void)
        -> any TransportTask
    {
        switch lookUp(request) {
        case .answered(let outcome):
            TransportEvent.answer(outcome.mapError { $0.naming(request.url) }, to: events)
            return AnsweredTask()
        case .missed(let request):
            switch miss {
            case .fail:
                events(.completed(missError(request)))
                return AnsweredTask()
            case .passThrough(let transport):
                return transport.send(request, events: events)
            case .record(let recording):
                return recording.send(request, events: events)
            }
        }
    }

    /// How many entries the recording holds, those recorded since it was read included.
    public var entryCount: Int { index.count }

    // MARK: Looking up

    private enum Lookup {
        case answered(Result<Response, ErrandError>)
        /// The request (perhaps a redirect's next one) the recording has no entry for.
        case missed(TransportRequest)
    }

    /// The recorded answer to `request`, following recorded redirects.
    private func lookUp(_ request: TransportRequest) -> Lookup {
        var request = request
        var redirectCount = 0
        while true {
            guard let url = ReplayURL(request.url),
                let entry = index.answer(method: request.method.uppercased(), url: url, body: body(of: request))
            else { return .missed(request) }
            guard case .success(let response) = entry.answer, RedirectPolicy.isRedirect(response.statusCode),
                let location = response.value(forHeader: "Location")
            else { return .answered(entry.answer) }
            switch redirectPolicy.next(
                after: request, statusCode: response.statusCode, location: location, redirectCount: redirectCount)
            {
            case .success(let next):
                request = next
                redirectCount += 1
            case .failure(let error):
                return .answered(.failure(error))
            }
        }
    }

    /// The body as ``ReplayBody/matches(_:)`` takes it; read only when bodies are compared.
    private func body(of request: TransportRequest) -> Data? {
        guard matching == .methodURLAndBody else { return nil }
        if let body = request.body { return body }
        if let file = request.bodyFileURL {
            guard let whole = try? Data(contentsOf: file) else { return nil }
            return Data(whole.dropFirst(Int(clamping: max(0, request.bodyFileOffset))))
        }
        return request.bodyStream == nil ? Data() : nil
    }

    private func missError(_ request: TransportRequest) -> ErrandError {
        let authorities = index.authorities
        let held =
            authorities.isEmpty
            ? "it holds no entries"
            : "it holds entries for \(authorities.joined(separator: ", "))"
        let compared = matching == .methodAndURL ? "method and URL" : "method, URL and body"
        let reason =
            "\(source) has no recorded exchange for \(request.method) \(request.url.absoluteString)"
            + " (compared by \(compared)); \(held)"
        return .transport(
            URLError(
                .resourceUnavailable,
                userInfo: [NSURLErrorFailingURLErrorKey: request.url, NSLocalizedDescriptionKey: reason]))
    }

    // MARK: Reading

    private static func archive(at url: URL, mayBeMissing: Bool) throws(ErrandError) -> HTTPArchive {
        if mayBeMissing, !FileManager.default.fileExists(atPath: url.path) { return HTTPArchive() }
        return try HTTPArchive(contentsOf: url)
    }

    private static func entries(of archive: HTTPArchive, in source: String) throws(ErrandError) -> [ReplayEntry] {
        var entries: [ReplayEntry] = []
        for (index, entry) in archive.log.entries.enumerated() {
            entries.append(try ReplayEntry(entry, at: index, in: source))
        }
        return entries
    }

    /// A request answered before `send` returned: there is nothing left to cancel.
    private struct AnsweredTask: TransportTask {
        func cancel() {}
    }
}

extension ReplayMiss {
    /// Whether this records into the file at `url`.
    fileprivate func recordsInto(_ url: URL) -> Bool {
        guard case .record(_, let file) = self else { return false }
        return file.standardizedFileURL.path == url.standardizedFileURL.path
    }
}
