import Foundation

/// One attempt's life within a task: begun, given its transport task, its head and body kept as
/// they arrive, ended or abandoned — each step checked against the attempt in flight, so that
/// events of an earlier or abandoned attempt are ignored.
extension RequestTask {
    /// Starts the next attempt with `request`; `nil` when the task was cancelled or finished
    /// meanwhile. `recordsJarCookies`: keep the cookies its jar gives now (``sentJarCookieHeader``).
    func beginAttempt(_ request: TransportRequest, recordsJarCookies: Bool = false) -> Int? {
        // Read before the transport sends it, outside the task's lock: the jar has a lock of its own.
        let jarCookieHeader = recordsJarCookies ? request.jarCookieHeader : nil
        return state.withLock { state in
            guard state.phase == .started, !state.isCancelled else { return nil }
            state.attempt += 1
            state.attemptInFlight = true
            state.bodyFiles.transportStarted()
            state.sentRequest = request
            state.sentJarCookieHeader = jarCookieHeader
            state.head = nil
            state.body = Data()
            state.trailers = [:]
            state.interimResponses = []
            state.pendingWork = nil
            return state.attempt
        }
    }

    /// Keeps the transport task of `attempt`, to cancel it; `false` when the attempt is over or
    /// abandoned, or the task cancelled: the caller cancels it then.
    func attach(_ transportTask: any TransportTask, to attempt: Int) -> Bool {
        state.withLock { state in
            guard state.attempt == attempt, state.attemptInFlight, !state.isCancelled, state.phase == .started else {
                return false
            }
            state.transportTask = transportTask
            return true
        }
    }

    /// Whether `attempt` is the one on the wire, not yet ended.
    func isInFlight(_ attempt: Int) -> Bool {
        state.withLock { $0.attempt == attempt && $0.attemptInFlight }
    }

    /// The transport task of `attempt`, while it is the one in flight.
    func transportTask(of attempt: Int) -> (any TransportTask)? {
        state.withLock { $0.attempt == attempt && $0.attemptInFlight ? $0.transportTask : nil }
    }

    /// Cancels `attempt` on the wire without cancelling the task, and ignores its later events:
    /// a download restarts, or the task fails for what was received.
    func abandon(_ attempt: Int) {
        let transportTask = state.withLock { state -> (any TransportTask)? in
            guard state.attempt == attempt else { return nil }
            state.attemptInFlight = false
            defer { state.transportTask = nil }
            return state.transportTask
        }
        transportTask?.cancel()
    }

    /// Accumulates the head and body of `attempt`, up to `limit` bytes of body, and reports upload progress.
    func record(_ event: TransportEvent, of attempt: Int, limit: Int) -> Recorded {
        if case .uploadProgress(let sent, let total) = event {
            progress.report(.upload, TransferProgress(completedBytes: sent, totalBytes: total))
            return .kept
        }
        let (recorded, received) = state.withLock { state -> (Recorded, Int?) in
            guard state.attempt == attempt, state.attemptInFlight, state.phase == .started else { return (.stale, nil) }
            switch event {
            case .interimHead(let statusCode, let headers):
                state.interimResponses.append(Response(statusCode: statusCode, headers: headers))
                return (.kept, nil)
            case .responseHead(let statusCode, let headers):
                let declared = headers.headerField("Content-Length").flatMap { Int($0) } ?? 0
                guard declared <= limit else { return (.tooLarge, nil) }
                state.head = (statusCode, headers)
                state.body = Data()
            case .body(let chunk):
                guard state.body.count + chunk.count <= limit else {
                    state.body = Data()
                    return (.tooLarge, nil)
                }
                // A body in one chunk, as most are, is kept as it came rather than copied.
                if state.body.isEmpty { state.body = chunk } else { state.body.append(chunk) }
            case .trailers(let trailers): state.trailers = trailers
            case .metrics(let metrics): state.metrics = metrics
            case .uploadProgress, .completed: return (.kept, nil)
            }
            // A download reports the bytes on disk itself.
            return (.kept, state.download == nil ? state.body.count : nil)
        }
        switch (event, received) {
        case (.responseHead(_, let headers), .some): progress.receivedHead(headers)
        case (.body, let count?): progress.receivedBody(count)
        default: break
        }
        return recorded
    }

    /// Ends `attempt` and returns the response it received, if a head arrived — the task shows
    /// it as ``response`` until it finishes — and whether the task was cancelled. With
    /// `concluding`, a download's cancel until ``concluded()`` leaves finishing it to the
    /// pipeline, which alone knows when the partial file is let go.
    func endAttempt(_ attempt: Int, concluding: Bool = false) -> (response: Response?, isCancelled: Bool) {
        let (received, reports, isCancelled) = state.withLock { state -> (Response?, Bool, Bool) in
            guard state.attempt == attempt else { return (nil, false, state.isCancelled) }
            state.attemptInFlight = false
            state.isConcluding = concluding && state.download != nil
            state.transportTask = nil
            let received = state.head.map {
                Response(statusCode: $0.statusCode, headers: $0.headers, data: state.body, trailers: state.trailers)
            }
            state.head = nil
            state.body = Data()
            state.trailers = [:]
            state.response = received
            // A download and a stream report their bodies' progress themselves.
            return (received, state.download == nil && state.stream == nil, state.isCancelled)
        }
        if reports, let received { progress.receivedBody(received.data.count, isComplete: true) }
        return (received, isCancelled)
    }

    /// Ends what ``endAttempt(_:concluding:)`` began; `true` when the task was cancelled before
    /// or meanwhile, so that the pipeline finishes it as cancelled.
    func concluded() -> Bool {
        state.withLock { state in
            defer { state.isConcluding = false }
            return state.isConcluding && state.isCancelled
        }
    }
}
