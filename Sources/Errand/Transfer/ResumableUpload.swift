import Foundation

/// One task's resumable upload (draft-ietf-httpbis-resumable-upload, interop version 8): which
/// exchange each attempt is — the upload's creation, a `HEAD` asking its offset, a `PATCH`
/// sending the rest — and, from what each answers, whether the task resumes or ends.
///
/// The upload resource the server offers (`104 Upload Resumption Supported`, `Location`) is kept
/// in a ``Record`` file, so that a later start of an equal request, in this process or the next,
/// resumes it. A dropped connection, a timeout or a `5xx` resumes at once, at most
/// ``resumptionsWithoutProgress`` times in a row without the server's offset moving.
final class ResumableUpload: Sendable {
    /// What an attempt asks of the server.
    enum Exchange: Equatable {
        /// The request as defined, whole file, offering resumption.
        case creation
        /// `HEAD` on the upload resource: how many bytes it holds.
        case offset
        /// `PATCH` of the rest from this offset.
        case append(from: Int64)
    }

    private struct State {
        var record: Record?
        /// The server's offset, once asked; `nil` while unknown.
        var offset: Int64?
        var exchange = Exchange.creation
        /// The final head of the attempt in flight.
        var head: (statusCode: Int, headers: [String: String])?
        var failedResumptions = 0
        /// The offset the last `HEAD` found: a larger one is progress.
        var lastOffset: Int64 = -1
        /// A final answer came from the resource the upload was for: the upload is over.
        var isOver = false
        /// The most bytes upload progress has reported: bytes sent before a drop that the server
        /// did not keep are sent again, and progress does not go back for them.
        var reportedBytes: Int64 = 0
    }

    /// The refusals to say an upload's offset that another attempt may not meet: credentials
    /// to refresh, a timeout, a rate limit.
    static let passingRefusals: Set<Int> = [401, 407, 408, 429]

    /// The most resumptions in a row that find the server's offset where it was.
    static let resumptionsWithoutProgress = 3
    /// The draft iteration spoken, sent as `Upload-Draft-Interop-Version`.
    static let interopVersion = "8"

    let file: URL
    private let fileState: Record.FileState
    private let requestURL: URL
    private let recordFile: URL
    private let state: Locked<State>

    /// The upload of `file` by `request` (as built), its record under `directory`; reads the
    /// record a previous start left, unless the file changed since.
    /// - Throws: ``ErrandError/fileSystem(_:)`` when the file cannot be measured.
    init(file: URL, request: TransportRequest, directory: URL) throws(ErrandError) {
        let measured = try Record.FileState(of: file)
        let recordFile = Record.file(for: request, uploading: file, in: directory)
        let kept = Record.load(from: recordFile).flatMap { $0.resumes(file: measured, to: request.url) ? $0 : nil }
        // A record of the file as it was before it changed is of no use.
        if kept == nil { Record.remove(recordFile) }
        self.file = file
        fileState = measured
        requestURL = request.url
        self.recordFile = recordFile
        state = Locked(State(record: kept))
    }

    /// What the attempt in flight asks.
    var exchange: Exchange { state[\.exchange] }

    // MARK: Requests

    /// The request the next attempt sends, made from the request as interceptors `adapted` it.
    func prepare(_ adapted: TransportRequest) -> TransportRequest {
        let (record, offset) = state.withLock { state -> (Record?, Int64?) in
            state.head = nil
            switch (state.record, state.offset) {
            case (nil, _): state.exchange = .creation
            case (.some, nil): state.exchange = .offset
            case (.some, let offset?): state.exchange = .append(from: offset)
            }
            return (state.record, state.offset)
        }
        var request = adapted
        request.headers["Upload-Draft-Interop-Version"] = Self.interopVersion
        guard let record, let uploadURL = URL(string: record.uploadURL) else {
            request.headers.setHeaderField("Upload-Complete", "?1")
            request.headers.setHeaderField("Upload-Length", String(fileState.size))
            return request
        }
        request.url = Record.url(uploadURL, withUserInfoOf: adapted.url)
        for field in ["Content-Type", "Content-Length", "Upload-Length", "Upload-Complete", "Upload-Offset"] {
            request.headers.removeHeaderField(field)
        }
        guard let offset else {
            request.method = "HEAD"
            request.body = nil
            request.bodyFileURL = nil
            request.bodyFileOffset = 0
            return request
        }
        request.method = "PATCH"
        request.body = nil
        request.bodyFileURL = file
        request.bodyFileOffset = offset
        request.headers["Content-Type"] = "application/partial-upload"
        request.headers["Content-Length"] = String(fileState.size - offset)
        request.headers["Upload-Offset"] = String(offset)
        request.headers["Upload-Complete"] = "?1"
        return request
    }

    // MARK: Events

    /// Takes one event of the attempt in flight.
    func receive(_ event: TransportEvent) -> EventDisposition {
        switch event {
        case .interimHead(104, let headers):
            offered(headers)
            return .record(event)
        case .responseHead(let statusCode, let headers):
            state.withLock { $0.head = (statusCode, headers) }
            return .record(event)
        case .uploadProgress(let sent, _):
            // A resumed upload's progress counts the bytes the server held before.
            let reported = state.withLock { state -> Int64? in
                let base: Int64
                switch state.exchange {
                case .creation: base = 0
                case .append(let offset): base = offset
                case .offset: return nil
                }
                state.reportedBytes = max(state.reportedBytes, base + sent)
                return state.reportedBytes
            }
            return reported.map { .record(.uploadProgress(bytesSent: $0, totalBytes: fileState.size)) } ?? .consumed
        case .completed(let error):
            return completed(with: error)
        case .interimHead, .body, .trailers, .metrics:
            return .record(event)
        }
    }

    /// A `104` offered to resume: keeps its upload resource, when it is on the request's own
    /// origin — the request's credentials go there with the rest of the file.
    private func offered(_ headers: [String: String]) {
        guard let location = headers.headerField("Location"),
            let uploadURL = URL(string: location, relativeTo: requestURL)?.absoluteURL,
            Self.isSameOrigin(uploadURL, requestURL)
        else { return }
        let record = state.withLock { state -> Record? in
            guard state.exchange == .creation, state.record == nil else { return nil }
            state.record = Record(
                uploadURL: Record.withoutUserInfo(uploadURL).absoluteString,
                requestURL: Record.withoutUserInfo(requestURL).absoluteString, file: fileState)
            return state.record
        }
        // Unsaved, the upload still resumes in this process; only a restart would start over.
        if let record { try? record.save(to: recordFile) }
    }

    /// Whether both URLs are on one origin: scheme, host and port.
    static func isSameOrigin(_ one: URL, _ other: URL) -> Bool {
        one.scheme?.lowercased() == other.scheme?.lowercased() && one.host?.lowercased() == other.host?.lowercased()
            && one.port == other.port
    }

    /// What the attempt's end means: resume, or end the task with what came.
    private func completed(with error: ErrandError?) -> EventDisposition {
        let (exchange, head) = state.withLock { ($0.exchange, $0.head) }
        guard error != .cancelled else { return .record(.completed(error)) }
        let answer = error == nil ? head : nil
        switch (exchange, answer?.statusCode) {
        case (.offset, let status?) where (200...299).contains(status):
            return tookOffset(from: answer?.headers ?? [:])
        case (.offset, 404), (.offset, 410), (.append, 404), (.append, 410):
            // The server let the upload go: it starts again, whole.
            return forgetAndResume()
        case (.append, 409):
            // The offset the server holds, which the rest goes from.
            guard let offset = Self.integer(answer?.headers.headerField("Upload-Offset")), offset <= fileState.size
            else { return over() }
            return resume(from: offset) ?? .record(.completed(nil))
        case (.offset, let status?) where Self.passingRefusals.contains(status):
            // A refusal that may pass (a 401 an interceptor answers, a 429): judged as any
            // response; the upload is kept for the next attempt.
            return .record(.completed(nil))
        case (.offset, let status?) where status < 500:
            // The upload is not this request's to resume (a 403): it starts again, whole.
            return forgetAndResume()
        case (_, let status?) where status < 500:
            return over()
        default:
            // A 5xx, a dropped connection, a timeout: resumable once the server offered it.
            guard state[\.record] != nil else { return over(error) }
            // Out of resumptions: the failure stands, and the upload is kept for a later start.
            return resume(from: nil) ?? .record(.completed(error))
        }
    }

    /// The final answer of the upload's resource came (or the upload could not be offered).
    private func over(_ error: ErrandError? = nil) -> EventDisposition {
        state.withLock { $0.isOver = true }
        return .record(.completed(error))
    }

    /// A `HEAD`'s answer: the rest goes from its `Upload-Offset`.
    private func tookOffset(from headers: [String: String]) -> EventDisposition {
        guard let offset = Self.integer(headers.headerField("Upload-Offset")), offset <= fileState.size else {
            forget()
            let held = headers.headerField("Upload-Offset").map { "an offset of \($0.prefix(32))" } ?? "no offset"
            return .fail(
                .transport(
                    URLError(
                        .badServerResponse,
                        userInfo: [
                            NSURLErrorFailingURLErrorKey: requestURL,
                            NSLocalizedDescriptionKey:
                                "resumable upload of \(file.lastPathComponent): the server answered \(held) for a"
                                + " \(fileState.size)-byte file, from which it cannot be resumed",
                        ])))
        }
        state.withLock { state in
            state.offset = offset
            if offset > state.lastOffset { state.failedResumptions = 0 }
            state.lastOffset = max(state.lastOffset, offset)
        }
        return .restart
    }

    /// Resumes after a failed attempt, with the offset known (`409`) or to be asked; `nil` once
    /// ``resumptionsWithoutProgress`` found no progress.
    private func resume(from offset: Int64?) -> EventDisposition? {
        state.withLock { state -> EventDisposition? in
            guard state.failedResumptions < Self.resumptionsWithoutProgress else { return nil }
            state.failedResumptions += 1
            state.offset = offset
            return .restart
        }
    }

    /// Starts the upload over: the server no longer has it.
    private func forgetAndResume() -> EventDisposition {
        forget()
        return resume(from: nil) ?? over()
    }

    /// Drops the upload resource: the next attempt creates another.
    private func forget() {
        state.withLock { state in
            state.record = nil
            state.offset = nil
        }
        Record.remove(recordFile)
    }

    /// An Item Structured Field's non-negative Integer (RFC 8941 §3.3.1: at most 15 digits).
    static func integer(_ value: String?) -> Int64? {
        guard let value = value?.trimmed, !value.isEmpty, value.utf8.count <= 15,
            value.utf8.allSatisfy({ (0x30...0x39).contains($0) })
        else { return nil }
        return Int64(value)
    }

    // MARK: The end

    /// The task's outcome, once its last attempt ended: an upload that is over lets its record
    /// go, and fails when the file changed while it was sent. A cancelled or failed one keeps it.
    func conclude(_ response: Response?, error: ErrandError?) -> (Response?, ErrandError?) {
        guard state[\.isOver] else { return (response, error) }
        Record.remove(recordFile)
        guard error == nil, (try? Record.FileState(of: file)) != fileState else { return (response, error) }
        return (
            response,
            .fileSystem(
                "resumable upload of \(file.path): the file changed while it was uploaded, so the server may hold"
                    + " a mix of its old and new bytes")
        )
    }
}
