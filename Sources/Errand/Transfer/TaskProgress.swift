import Dispatch

/// One task's upload and download progress. A reporter is made only when something listens —
/// a closure, a delegate, a stream asked for — so a task without listeners pays one uncontended
/// lock per report and allocates nothing for it.
final class TaskProgress: Sendable {
    enum Direction {
        case upload, download
    }

    private struct State {
        var uploadSinks: [ProgressReporter.Sink] = []
        var downloadSinks: [ProgressReporter.Sink] = []
        var upload: ProgressReporter?
        var download: ProgressReporter?
        /// The newest values, kept without a reporter so that a stream asked for late starts with them.
        var latestUpload: TransferProgress?
        var latestDownload: TransferProgress?
        /// The in-memory body's length as declared by its head; `nil` when unknown or encoded.
        var expectedBytes: Int64?
        var isFinished = false
    }

    private let state: Locked<State>

    init(request: any BaseRequest, queue: DispatchQueue) {
        var state = State()
        if let closure = request.uploadProgress {
            state.uploadSinks.append(.init(closure: closure, queue: queue))
        }
        for closure in [request.downloadProgress, request.resumableDownloadProgress].compactMap({ $0 }) {
            state.downloadSinks.append(.init(closure: closure, queue: queue))
        }
        self.state = Locked(state)
    }

    /// Tells `delegate` of `task`'s progress on the main actor; before the task starts.
    func notify(_ delegate: TaskCompletion.WeakDelegate, about task: RequestTask) {
        state.withLock { state in
            state.uploadSinks.append(
                .init(
                    closure: { [weak task] progress in
                        guard let task else { return }
                        MainActor.assumeIsolated { delegate.delegate?.request(task, didUpdateUploadProgress: progress) }
                    }, queue: .main))
            state.downloadSinks.append(
                .init(
                    closure: { [weak task] progress in
                        guard let task else { return }
                        MainActor.assumeIsolated {
                            delegate.delegate?.request(task, didUpdateDownloadProgress: progress)
                        }
                    }, queue: .main))
        }
    }

    func stream(_ direction: Direction) -> AsyncStream<TransferProgress> {
        let (reporter, isFinished) = state.withLock { state in
            (Self.reporter(direction, in: &state, creating: true), state.isFinished)
        }
        // Asked for after the task finished: a stream that ends at once.
        if isFinished { reporter?.finish() }
        return reporter?.stream() ?? AsyncStream { $0.finish() }
    }

    func report(_ direction: Direction, _ progress: TransferProgress) {
        report(direction) { _ in progress }
    }

    /// An in-memory response's head arrived: its body starts from zero.
    func receivedHead(_ headers: [String: String]) {
        let encoding = headers.headerField("Content-Encoding")?.lowercased() ?? "identity"
        // A decoded body's bytes are not the ones Content-Length counts.
        let expected = encoding == "identity" ? headers.headerField("Content-Length").flatMap { Int64($0) } : nil
        report(.download) { state in
            state.expectedBytes = expected
            return TransferProgress(completedBytes: 0, totalBytes: expected)
        }
    }

    /// `count` bytes of the in-memory body have arrived; with `isComplete`, all of them.
    func receivedBody(_ count: Int, isComplete: Bool = false) {
        report(.download) { state in
            let total = isComplete ? Int64(count) : state.expectedBytes.map { max($0, Int64(count)) }
            return TransferProgress(completedBytes: Int64(count), totalBytes: total)
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

    /// Keeps the value `progress` computes as the newest and passes it to the reporter, if any:
    /// one lock, and no allocation when nothing listens.
    private func report(_ direction: Direction, _ progress: (inout State) -> TransferProgress) {
        let report = state.withLock { state -> (ProgressReporter, TransferProgress)? in
            let value = progress(&state)
            switch direction {
            case .upload: state.latestUpload = value
            case .download: state.latestDownload = value
            }
            return Self.reporter(direction, in: &state, creating: false).map { ($0, value) }
        }
        if let (reporter, value) = report { reporter.report(value) }
    }

    /// The reporter of `direction`, made now if something listens or `creating` (for a stream).
    private static func reporter(_ direction: Direction, in state: inout State, creating: Bool) -> ProgressReporter? {
        let isFinished = state.isFinished
        switch direction {
        case .upload:
            let (sinks, latest) = (state.uploadSinks, state.latestUpload)
            return make(&state.upload, sinks, latest, when: creating || (!sinks.isEmpty && !isFinished))
        case .download:
            let (sinks, latest) = (state.downloadSinks, state.latestDownload)
            return make(&state.download, sinks, latest, when: creating || (!sinks.isEmpty && !isFinished))
        }
    }

    private static func make(
        _ reporter: inout ProgressReporter?, _ sinks: [ProgressReporter.Sink], _ latest: TransferProgress?,
        when needed: Bool
    ) -> ProgressReporter? {
        if reporter == nil, needed { reporter = ProgressReporter(sinks: sinks, latest: latest) }
        return reporter
    }
}
