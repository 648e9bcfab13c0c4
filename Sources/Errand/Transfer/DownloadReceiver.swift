import Foundation

/// Steers one download's responses: a success's body streams into the ``PartialDownload`` and
/// never into memory, an error's body stays in memory like any failed request's, and a partial
/// that no longer matches the resource restarts the download from zero, once.
final class DownloadReceiver: Sendable {
    let partial: PartialDownload
    private let progress: TaskProgress
    private let state = Locked(State())

    private struct State {
        var isWriting = false
        var isRestarting = false
        var restartsLeft = 1
    }

    init(partial: PartialDownload, progress: TaskProgress) {
        self.partial = partial
        self.progress = progress
    }

    /// `request` with the headers that resume the partial, if any, and a request for the body
    /// unencoded: a decompressed body's byte offsets are not the server's, so it could not resume.
    func prepare(_ request: TransportRequest) -> TransportRequest {
        var request = request
        if request.value(forHeader: "Accept-Encoding") == nil {
            request.headers["Accept-Encoding"] = "identity"
        }
        request.headers.merge(partial.resumeHeaders()) { _, resume in resume }
        state.withLock { $0.isWriting = false }
        return request
    }

    func receive(_ event: TransportEvent) -> EventDisposition {
        switch event {
        case .responseHead(let statusCode, let headers):
            return begin(event, statusCode: statusCode, headers: headers)
        case .body(let chunk):
            let (isWriting, isRestarting) = state.withLock { ($0.isWriting, $0.isRestarting) }
            if isRestarting { return .consumed }
            guard isWriting else { return .record(event) }
            do {
                try partial.write(chunk)
            } catch {
                return .fail(error)
            }
            reportProgress()
            return .consumed
        case .interimHead, .uploadProgress, .trailers, .metrics:
            return .record(event)
        case .completed:
            let wasRestarting = state.withLock { state in
                defer { state.isRestarting = false }
                return state.isRestarting
            }
            return wasRestarting ? .restart : .record(event)
        }
    }

    /// The response of a finished attempt: on success the file is moved into place and named by
    /// ``Response/fileURL``; on failure the partial is kept for the next attempt.
    func conclude(_ response: Response?, error: ErrandError?) -> (Response?, ErrandError?) {
        guard error == nil, let response, state.withLock({ $0.isWriting }) else {
            partial.suspend()
            return (response, error)
        }
        do {
            let file = try partial.complete()
            let downloaded = Response(
                statusCode: response.statusCode, headers: response.headers, fileURL: file, trailers: response.trailers)
            return (downloaded, nil)
        } catch {
            return (response, error)
        }
    }

    /// Whether this attempt's body goes to the file: a success, not an error's body.
    var isWriting: Bool { state[\.isWriting] }

    /// Keeps the partial for the next attempt; for a cancel.
    func suspend() {
        partial.suspend()
    }

    private func begin(_ head: TransportEvent, statusCode: Int, headers: [String: String]) -> EventDisposition {
        let disposition: PartialDownload.Disposition
        do {
            disposition = try partial.begin(statusCode: statusCode, headers: headers)
        } catch {
            return .fail(error)
        }
        switch disposition {
        case .writing:
            state.withLock { $0.isWriting = true }
            reportProgress()
            return .record(head)
        case .notADownload:
            return .record(head)
        case .restartWithoutRange:
            let mayRestart = state.withLock { state in
                guard state.restartsLeft > 0 else { return false }
                state.restartsLeft -= 1
                state.isRestarting = true
                return true
            }
            return mayRestart
                ? .restart
                : .fail(
                    .fileSystem(
                        "download to \(partial.targetURL.path): the server's answers to resuming do not match the resource"
                    ))
        }
    }

    private func reportProgress() {
        let (written, expected) = partial.progress
        progress.report(.download, TransferProgress(completedBytes: written, totalBytes: expected))
    }
}
