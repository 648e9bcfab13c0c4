import Foundation

extension NetworkAgent {
    /// Sends `request` and returns its body as a ``ResponseStream`` once the head is in: for
    /// Server-Sent Events, NDJSON and bodies too large to hold.
    ///
    /// The request goes through the same stages as any other — URL building and filters,
    /// interceptors' `adapt`, accessories, `description` — but never through the cache, and it is
    /// neither coalesced nor downloaded to its `resumableDownloadPath`. It returns once
    /// `statusCodeValidator` accepted the head; until a body byte reached the stream, a failed
    /// attempt may be retried as the interceptors decide. An open stream does not count against
    /// ``maxConcurrentRequests``.
    ///
    /// Cancelling the calling Swift task before the stream opens cancels the request; after,
    /// cancelling the task that reads the stream does.
    /// - Throws: ``ErrandError/statusCode(_:)`` for a rejected status — the task, which the
    ///   request's ``BaseRequest/requestAccessories`` see, keeps the response with up to 64 KiB of
    ///   its body, or all of it up to the request's own ``BaseRequest/maximumResponseSize`` when
    ///   it sets one (``ErrandError/responseTooLarge(_:)`` past it) — or any error a request can
    ///   fail with before its response.
    public func stream(_ request: any BaseRequest) async throws(ErrandError) -> ResponseStream {
        try await stream(request, headers: [:])
    }

    /// Streams `request` with `headers` set over its own on every attempt; `upgradesToWebSocket`
    /// makes it a WebSocket's handshake, which only a `101` opens.
    func stream(_ request: any BaseRequest, headers: [String: String], upgradesToWebSocket: Bool = false)
        async throws(ErrandError) -> ResponseStream
    {
        let box = Locked<RequestTask?>(nil)
        // The stream is made on the thread that delivered its head and handed over through this
        // lock as well as the continuation: ThreadSanitizer on Linux once reported its making
        // racing with its first use here, the continuation's resume between them; a lock is an
        // order it always sees.
        let handedOver = Locked<Result<ResponseStream, ErrandError>>(.failure(.cancelled))
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let receiver = StreamReceiver(
                    bufferLimit: pipeline.streamBufferLimit, headers: headers, upgradesToWebSocket: upgradesToWebSocket
                ) { result in
                    handedOver.withLock { $0 = result }
                    continuation.resume()
                }
                let task = pipeline.makeTask(request, completion: .continuation { receiver.finished($0) })
                task.stream = receiver
                box.withLock { $0 = task }
                pipeline.start(task, readsCache: false)
                if Task.isCancelled { task.cancel() }
            }
        } onCancel: {
            // Only until it opens: the stream's reader decides after.
            if let task = box.withLock({ $0 }), task.stream?.isOpen != true { task.cancel() }
        }
        return try handedOver.withLock { $0 }.get()
    }
}
