import Dispatch
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Takes each task through the stages, one way: build → cache lookup → queue → adapt →
/// transport → validation → retry decision → cache store → delivery. Where the URL's stored
/// responses vary on the request, the lookup cannot choose before the request is final: the
/// variant is chosen by the request as it goes out, after adapt (right after the build when
/// no interceptor adapts it), and a hit is delivered from there.
///
/// The stages take and return values; the task owns its state. Response work — validation,
/// interceptors, cache stores — runs on the thread that delivers the transport's completion,
/// which a transport never needs back, or on an `async` caller's own task (``AwaitingCaller``);
/// a retry waits without holding a slot.
final class RequestPipeline: Sendable {
    let config: NetworkConfig
    let scheduler: RequestScheduler
    let cache: ResponseCache
    /// Sends the requests, sharing identical calls in flight when their plan coalesces.
    let coalescer: TransportCoalescer
    let retryTimer: RetryTimer
    /// Read once, as the transport reads the session configuration once.
    let sessionSetsUserAgent: Bool
    /// The fields the session adds to what the pipeline sends, which a stored response's `Vary` may name.
    let sentFields: SentFields
    /// Bytes a ``ResponseStream`` holds ahead of its consumer before its transfer pauses: the
    /// transport's own limit where it has one.
    let streamBufferLimit: Int
    private let mainQueueWatch: MainQueueWatch

    init(config: NetworkConfig, transport: any Transport, retryTimer: RetryTimer, mainQueueWatch: MainQueueWatch) {
        self.config = config
        coalescer = TransportCoalescer(transport: transport)
        self.retryTimer = retryTimer
        self.mainQueueWatch = mainQueueWatch
        scheduler = RequestScheduler(maxConcurrent: 6)
        cache = ResponseCache(config: config)
        sessionSetsUserAgent = UserAgent.isSet(in: config.sessionConfiguration)
        sentFields = SentFields(configuration: config.sessionConfiguration)
        streamBufferLimit = (transport as? any StreamBufferingTransport)?.bufferLimit ?? StreamReceiver.bufferLimit
    }

    /// The task for one execution of `request`; `cancel()` on it finishes it with `.cancelled`.
    func makeTask(_ request: any BaseRequest, completion: TaskCompletion) -> RequestTask {
        RequestTask(
            request: request, completion: completion, config: config,
            monitors: config.monitorsForNewRequest()
        ) { [self] task in
            finish(task, response: task.response, error: .cancelled)
        }
    }

    /// Runs `task` from a valid cached entry when `readsCache` finds one; else from the network, asking about `stale`.
    func start(_ task: RequestTask, readsCache: Bool, revalidating stale: Response? = nil) {
        scheduler.register(task)
        // A task cancelled before it started was told of its stop then: a start now would open
        // what nothing closes (a batch cancels the members it has not started yet).
        if !task.isCancelled { task.accessories.forEach { $0.requestWillStart(task) } }
        // Cancelled already: finishing could not yet unregister it.
        guard task.start() else { return scheduler.finish(task) }
        task.monitors.requestDidStart(task)
        let plan: RequestPlan
        do {
            plan = try RequestPlan(
                task.request, config: config, streams: task.stream != nil,
                upgradesToWebSocket: task.stream?.upgradesToWebSocket ?? false)
        } catch {
            return finish(task, response: nil, error: error)
        }
        task.cacheFolder = plan.cache?.key.directory
        if plan.isOffline {
            return serveOffline(task, plan)
        }
        guard readsCache, let settings = plan.cache else { return sendToNetwork(task, plan, revalidating: stale) }
        if let found = cache.lookupInMemory(settings) { return serveOrSend(task, plan, settings, found) }
        // A file to read: not on the caller's thread, which may be the main thread.
        Self.cacheReader.async { [self] in serveOrSend(task, plan, settings, cache.lookup(settings)) }
    }

    /// Where entries that are not in memory are read from disk.
    static let cacheReader = DispatchQueue(
        label: "errand.cache-reader", qos: .userInitiated, attributes: .concurrent)

    /// Builds `task`'s request and queues it for the network, conditional on `stale`'s validator.
    func sendToNetwork(_ task: RequestTask, _ plan: RequestPlan, revalidating stale: Response?) {
        var plan = plan
        var built: TransportRequestBuilder.Output
        do {
            built = try TransportRequestBuilder.build(
                task.request, config: config, sessionSetsUserAgent: sessionSetsUserAgent)
            try attachDownload(to: task, target: plan.downloadTarget, url: built.request.url)
        } catch {
            return finish(task, response: nil, error: error)
        }
        built.request.isStreaming = plan.streams
        if let jar = plan.accountCookieJar, built.request.cookieJar != nil { built.request.cookieJar = jar }
        if plan.cache?.followsHTTPCaching == true { plan.sentAt = config.cacheClock() }
        Self.ask(about: stale, in: &built.request, plan: &plan)
        if task.stream?.upgradesToWebSocket == true {
            built.request.upgradesToWebSocket = true
            built.request.url = WebSocketURL.webSocket(built.request.url)
        }
        for (name, value) in task.stream?.headers ?? [:] {
            built.request.headers.setHeaderField(name, value)
        }
        if let path = plan.resumableUploadPath { return attachUpload(to: task, plan, built.request, path: path) }
        // With no interceptor to adapt it, the request as built is the request as sent.
        guard !plan.choosesVariantAsSent || !plan.interceptors.isEmpty || built.largeMultipartBody != nil else {
            return chooseVariant(task, plan, built.request) { [self] plan, request in
                task.built(request)
                enqueue(task, plan, request)
            }
        }
        task.built(built.request)
        guard let form = built.largeMultipartBody else {
            return enqueue(task, plan, built.request)
        }
        // Encoding a large body into a file takes a while: not on the caller's thread.
        DispatchQueue.global(qos: .userInitiated).async { [self, built, plan] in
            do throws(ErrandError) {
                let (file, length) = try form.writeTemporaryFile()
                guard task.adoptTemporaryFile(file) else {
                    try? FileManager.default.removeItem(at: file)
                    return
                }
                var request = built.request
                request.bodyFileURL = file
                request.headers["Content-Length"] = String(length)
                task.built(request)
                enqueue(task, plan, request)
            } catch {
                finish(task, response: nil, error: error)
            }
        }
    }

    /// Finishes a task that was never sent with a cached response, accessories and all.
    func serve(_ task: RequestTask, from response: Response) {
        scheduler.register(task)
        // A task cancelled before it started was told of its stop then: a start now would open
        // what nothing closes (a batch cancels the members it has not started yet).
        if !task.isCancelled { task.accessories.forEach { $0.requestWillStart(task) } }
        _ = task.start()
        task.monitors.requestDidStart(task)
        serveCached(task, response)
    }

    /// Finishes `task` with a response from the cache, telling its monitors where it came from.
    func serveCached(_ task: RequestTask, _ response: Response, error: ErrandError? = nil) {
        task.monitors.request(task, didServeFromCache: response)
        finish(task, response: response, error: error)
    }

    // MARK: Attempts

    /// Waits for a slot, then adapts and sends one attempt.
    func enqueue(_ task: RequestTask, _ plan: RequestPlan, _ request: TransportRequest) {
        scheduler.enqueue(task, priority: plan.priority, bypassingLimit: plan.isInterceptorWork) { [self] in
            guard !plan.interceptors.isEmpty else { return send(task, plan, request, adapted: request) }
            task.wait {
                let adapting = Task { [self] in
                    do throws(ErrandError) {
                        let adapted = try await plan.interceptors.adapt(request, for: task)
                        send(task, plan, request, adapted: adapted)
                    } catch {
                        finish(task, response: nil, error: error)
                    }
                }
                return { adapting.cancel() }
            }
        }
    }

    private func send(_ task: RequestTask, _ plan: RequestPlan, _ request: TransportRequest, adapted: TransportRequest)
    {
        let outgoing: TransportRequest
        do {
            let prepared = task.download?.prepare(adapted) ?? task.upload?.prepare(adapted) ?? adapted
            outgoing = try HeaderFieldCheck.checked(prepared).markingSecretHeaders()
        } catch {
            return finish(task, response: nil, error: error)
        }
        chooseVariant(task, plan, outgoing) { [self] plan, outgoing in transmit(task, plan, request, outgoing) }
    }

    /// Sends `outgoing`, the final form of `request`, as one attempt of `task`.
    private func transmit(
        _ task: RequestTask, _ plan: RequestPlan, _ request: TransportRequest, _ outgoing: TransportRequest
    ) {
        let (download, upload, stream) = (task.download, task.upload, task.stream)
        let recordsJarCookies = plan.cache?.followsHTTPCaching == true
        guard let attempt = task.beginAttempt(outgoing, recordsJarCookies: recordsJarCookies) else {
            return scheduler.release(task)  // Cancelled meanwhile: it has finished.
        }
        task.monitors.request(task, willSend: outgoing)
        // An `async` caller judges its own response on its task. Unless a cache entry is to be
        // stored, that leaves this closure only recording what arrives, and then, when neither
        // monitors nor a body file need it, the transport may run it on its own thread.
        let caller = plan.cache == nil && download == nil && upload == nil && stream == nil ? task.awaitingCaller : nil
        let deliversDirectly =
            caller != nil && task.monitors.isEmpty && outgoing.bodyFileURL == nil && outgoing.bodyStream == nil
        let events: @Sendable (TransportEvent) -> Void = { [self] event in
            // Before the outcome is delivered: a body file the transport no longer reads goes first.
            if case .completed = event { task.transportCompleted() }
            if !task.monitors.isEmpty {
                switch event {
                case .interimHead(let status, let headers):
                    task.monitors.request(task, didReceiveInterim: Response(statusCode: status, headers: headers))
                case .responseHead(let status, let headers):
                    task.monitors.request(task, didReceive: Response(statusCode: status, headers: headers))
                default: break
                }
            }
            let disposition =
                stream?.receive(
                    event, task: task, rules: plan.rules, maximumEventSize: plan.maximumResponseSize,
                    refusedBodyLimit: plan.refusedStreamBodyLimit) ?? download?.receive(event) ?? upload?.receive(event)
                ?? .record(event)
            switch disposition {
            case .record(let event):
                // A body that goes to a file or a stream's consumer is not held, so not limited;
                // what a stream keeps of a rejected response, its receiver bounds.
                let limit = stream != nil || download?.isWriting == true ? Int.max : plan.maximumResponseSize
                switch task.record(event, of: attempt, limit: limit) {
                case .kept:
                    // An open stream may last for hours: it does not keep a place in the queue.
                    if case .responseHead = event, stream?.isStreaming == true { scheduler.release(task) }
                    guard case .completed(let error) = event else { return }
                    guard let caller else { return complete(task, attempt, plan, request, transportError: error) }
                    caller.post(.run { [self] in complete(task, attempt, plan, request, transportError: error) })
                case .stale:
                    break
                case .tooLarge:
                    task.abandon(attempt)
                    failAttempt(task, .responseTooLarge(plan.maximumResponseSize))
                }
            case .consumed:
                break
            case .recordAndEnd(let event):
                // Once: the chunks already on their way find the attempt ended.
                guard task.isInFlight(attempt) else { return }
                if let event, case .stale = task.record(event, of: attempt, limit: .max) { return }
                let transportTask = task.transportTask(of: attempt)
                // Judged first: the attempt ends, so the stop's own completion finds it stale.
                complete(task, attempt, plan, request, transportError: nil)
                transportTask?.cancel()
            case .restart:
                guard case .completed = event else { return task.abandon(attempt) }
                _ = task.endAttempt(attempt)
                scheduler.release(task)
                requeue(task, plan, request, response: nil)
            case .fail(let error):
                // The file is let go before the attempt ends: a cancel until then does not finish the
                // task, whose download target the next start may claim.
                download?.suspend()
                task.abandon(attempt)
                failAttempt(task, error)
            }
        }
        // A caller that joins another's call uses no connection: its slot goes to the next.
        let transportTask = coalescer.send(
            outgoing, coalescing: plan.coalesces, deliversDirectly: deliversDirectly,
            joining: { scheduler.release(task) }, events: events)
        stream?.attach(transportTask, of: task, maximumEventSize: plan.maximumResponseSize)
        if !task.attach(transportTask, to: attempt) { transportTask.cancel() }
    }

    /// Judges a finished attempt, then retries it, or concludes the task.
    private func complete(
        _ task: RequestTask, _ attempt: Int, _ plan: RequestPlan, _ request: TransportRequest,
        transportError: ErrandError?
    ) {
        scheduler.release(task)
        let ended = task.endAttempt(attempt, concluding: true)
        var response = ended.response
        if let revalidation = plan.revalidation, let notModified = response, notModified.statusCode == 304 {
            response = revalidation.refreshed(by: notModified)
        }
        // A download cancelled on the wire waits for its transport to stop; one that finished
        // meanwhile is still cancelled, and its partial, complete or not, is kept for the next start.
        let bodyIsHandedOff = task.download?.isWriting ?? task.stream?.isStreaming ?? false
        var error =
            (ended.isCancelled ? .cancelled : transportError) ?? response.map {
                ResponseValidator.validate($0, by: plan.rules, url: request.url, bodyIsHandedOff: bodyIsHandedOff)
            } ?? .transport(URLError(.badServerResponse, userInfo: [NSURLErrorFailingURLErrorKey: request.url]))
        if let download = task.download {
            (response, error) = download.conclude(response, error: error)
            // A cancel while the file was concluded did not finish the task: it ends here.
            if task.concluded() { error = .cancelled }
        }
        if let upload = task.upload { (response, error) = upload.conclude(response, error: error) }
        // A stream's body was its consumer's: nothing is left for interceptors to judge, and
        // once a byte was handed out, sending again would hand it out twice.
        if task.stream?.hasHandedOutBody == true {
            if let error { task.monitors.request(task, didFailAttempt: error, willRetry: false) }
            return conclude(task, plan, response: response, error: error)
        }
        if error == nil, let response, task.stream?.isStreaming != true {
            do throws(ErrandError) {
                try plan.interceptors.validate(response, for: task)
            } catch let rejection {
                error = rejection
            }
        }
        // A body produced while it was sent is gone: another attempt would send a different body, or none.
        let sentBodyOnce = request.bodyStream != nil || task.sentRequest?.bodyStream != nil
        guard let error, error != .cancelled, !plan.interceptors.isEmpty, !sentBodyOnce else {
            if let error { task.monitors.request(task, didFailAttempt: error, willRetry: false) }
            return conclude(task, plan, response: response, error: error)
        }
        decideRetry(task, plan, request, response: response, error: error)
    }

    /// Finishes `task` with `error`, the end of its last attempt.
    private func failAttempt(_ task: RequestTask, _ error: ErrandError) {
        task.monitors.request(task, didFailAttempt: error, willRetry: false)
        finish(task, response: nil, error: error)
    }

    /// Asks the interceptors what to do about a failed attempt, and does it.
    private func decideRetry(
        _ task: RequestTask, _ plan: RequestPlan, _ request: TransportRequest, response: Response?, error: ErrandError
    ) {
        task.wait {
            let deciding = Task { [self] in
                let decision = await plan.interceptors.retry(task, dueTo: error)
                let willRetry =
                    switch decision {
                    case .retry, .retryAfter: true
                    case .doNotRetry, .fail: false
                    }
                task.monitors.request(task, didFailAttempt: error, willRetry: willRetry)
                switch decision {
                case .doNotRetry: conclude(task, plan, response: response, error: error)
                case .fail(let replacement): conclude(task, plan, response: response, error: replacement)
                case .retry: requeue(task, plan, request, response: response)
                case .retryAfter(let seconds):
                    task.wait {
                        retryTimer.schedule(max(0, seconds)) { [self] in
                            requeue(task, plan, request, response: response)
                        }
                    }
                }
            }
            return { deciding.cancel() }
        }
    }

    /// Queues another attempt, unless the task was cancelled meanwhile.
    private func requeue(_ task: RequestTask, _ plan: RequestPlan, _ request: TransportRequest, response: Response?) {
        guard !task.isCancelled else { return finish(task, response: response, error: .cancelled) }
        enqueue(task, plan, request)
    }

    /// Stores a success in the cache, or serves a stale entry in place of a failure, and finishes.
    private func conclude(_ task: RequestTask, _ plan: RequestPlan, response: Response?, error: ErrandError?) {
        // An HTTP cache compares the fields the last attempt went out with; YTKNetwork's, none.
        // The cookies as the attempt sent them, not as its response's `Set-Cookie` left the jar.
        let sent =
            plan.cache?.followsHTTPCaching == true
            ? task.sentRequest.map { sentFields.headers(of: $0, jarCookieHeader: task.sentJarCookieHeader) } : [:]
        if let fallback = staleFallback(plan.cache, sending: sent, response: response, error: error) {
            return serveCached(task, fallback, error: refusal(of: fallback, plan))
        }
        if let response, let settings = plan.cache, let sent, settings.offersToStore(after: error) {
            cache.store(response, as: settings, sentAt: plan.sentAt, sending: sent)
        }
        finish(task, response: response, error: error)
    }

    // MARK: Delivery

    func finish(_ task: RequestTask, response: Response?, error: ErrandError?) {
        // Its slot and download target go first: once the task reads as finished (its value,
        // its error, its progress streams ending), starting the same download again must find
        // the file free. Every call ends the task, so releasing them early frees nothing live.
        scheduler.finish(task)
        guard task.finish(response: response, error: error) else { return }
        let watch = config.debugLogEnabled ? mainQueueWatch : nil
        guard !task.monitors.isEmpty else { return task.deliver(on: config.callbackQueue, watch: watch) }
        let callbackQueue = config.callbackQueue
        task.monitors.request(task, didFinish: task.outcome) { task.deliver(on: callbackQueue, watch: watch) }
    }
}
