import Dispatch

/// One task's upload and download progress. A reporter is made only when something listens —
/// a closure, a delegate, a stream asked for — so a task nobody watches pays one uncontended
/// lock per event, allocates nothing for progress and never parses a header for it.
final class TaskProgress: Sendable {
    enum Direction {
        case upload, download
    }

    /// An in-memory response body so far, turned into a ``TransferProgress`` only when reported.
    private struct Body {
        let headers: [String: String]
        var count = 0
        var isComplete = false
        /// The declared length, parsed from `headers` on first need; `.some(nil)` when unknown.
        var expected: Int64??

        init(headers: [String: String]) {
            self.headers = headers
        }

        mutating func progress() -> TransferProgress {
            if expected == nil {
                let encoding = headers.headerField("Content-Encoding")?.lowercased() ?? "identity"
                // A decoded body's bytes are not the ones Content-Length counts.
                expected = .some(
                    encoding == "identity" ? headers.headerField("Content-Length").flatMap { Int64($0) } : nil)
            }
            let total = isComplete ? Int64(count) : (expected ?? nil).map { max($0, Int64(count)) }
            return TransferProgress(completedBytes: Int64(count), totalBytes: total)
        }
    }

    private struct State {
        var uploadSinks: [ProgressReporter.Sink] = []
        var downloadSinks: [ProgressReporter.Sink] = []
        var upload: ProgressReporter?
        var download: ProgressReporter?
        /// The newest values, kept without a reporter so that a stream asked for late starts with them.
        var latestUpload: TransferProgress?
        var latestDownload: TransferProgress?
        var body: Body?
        var isFinished = false
    }

    private let state: Locked<State>

    init(request: any BaseRequest, queue: DispatchQueue) {
        var state = State()
        if let closure = request.uploadProgress {
            state.uploadSinks.append(.init(closure: closure, queue: queue))
        }
        if let closure = request.downloadProgress {
            state.downloadSinks.append(.init(closure: closure, queue: queue))
        }
        if let closure = request.resumableDownloadProgress {
            state.downloadSinks.append(.init(closure: closure, queue: queue))
        }
        self.state = Locked(state)
    }

    /// Tells `delegate` of `task`'s progress on the main actor; before the task starts.
    func notify(_ delegate: TaskCompletion.WeakDelegate, about task: RequestTask) {
        let upload = ProgressReporter.Sink(
            closure: { [weak task] progress in
                guard let task else { return }
                MainActor.assumeIsolated { delegate.delegate?.request(task, didUpdateUploadProgress: progress) }
            }, queue: .main)
        let download = ProgressReporter.Sink(
            closure: { [weak task] progress in
                guard let task else { return }
                MainActor.assumeIsolated { delegate.delegate?.request(task, didUpdateDownloadProgress: progress) }
            }, queue: .main)
        state.withLock { state in
            state.uploadSinks.append(upload)
            state.downloadSinks.append(download)
        }
    }

    func stream(_ direction: Direction) -> AsyncStream<TransferProgress> {
        let (reporter, isFinished) = state.withLock { state in
            (Self.reporter(direction, in: &state, creating: true), state.isFinished)
        }
        // Asked for after the task finished: a stream of the last value that ends at once.
        if isFinished { reporter?.finish() }
        return reporter?.stream() ?? AsyncStream { $0.finish() }
    }

    /// A value computed elsewhere: upload progress, or a download's bytes on disk.
    func report(_ direction: Direction, _ progress: TransferProgress) {
        let reporter = state.withLock { state in
            // Made before the new value is kept: a reporter made with it as its newest would take
            // the report for a repeat and drop it, and a body sent in one piece would report nothing.
            let reporter = Self.reporter(direction, in: &state, creating: false)
            switch direction {
            case .upload: state.latestUpload = progress
            case .download: state.latestDownload = progress
            }
            return reporter
        }
        reporter?.report(progress)
    }

    /// An in-memory response's head arrived: its body starts from zero.
    func receivedHead(_ headers: [String: String]) {
        reportBody { $0 = Body(headers: headers) }
    }

    /// `count` bytes of the in-memory body have arrived; with `isComplete`, all of them.
    func receivedBody(_ count: Int, isComplete: Bool = false) {
        reportBody { body in
            body?.count = count
            body?.isComplete = isComplete
        }
    }

    /// Ends every stream; later reports are dropped.
    func finish() {
        let reporters = state.withLock { state in
            state.isFinished = true
            return [state.upload, state.download]
        }
        reporters.forEach { $0?.finish() }
    }

    private func reportBody(_ update: (inout Body?) -> Void) {
        let report = state.withLock { state -> (ProgressReporter, TransferProgress)? in
            // Made before the update, as in ``report(_:_:)``.
            let reporter = Self.reporter(.download, in: &state, creating: false)
            update(&state.body)
            guard let reporter, let progress = state.body?.progress() else { return nil }
            return (reporter, progress)
        }
        if let (reporter, progress) = report { reporter.report(progress) }
    }

    /// The reporter of `direction`, made now if something listens or `creating` (for a stream).
    private static func reporter(_ direction: Direction, in state: inout State, creating: Bool) -> ProgressReporter? {
        switch direction {
        case .upload:
            guard state.upload == nil, creating || (!state.uploadSinks.isEmpty && !state.isFinished) else {
                return state.upload
            }
            state.upload = ProgressReporter(sinks: state.uploadSinks, latest: state.latestUpload)
            return state.upload
        case .download:
            guard state.download == nil, creating || (!state.downloadSinks.isEmpty && !state.isFinished) else {
                return state.download
            }
            let latest = state.body?.progress() ?? state.latestDownload
            state.download = ProgressReporter(sinks: state.downloadSinks, latest: latest)
            return state.download
        }
    }
}
