import Dispatch
import Foundation

extension RequestTask {
    /// Where a task is in its life; it goes through each once, in order.
    enum Phase { case created, started, finished }

    /// Everything a task holds under its one lock.
    struct State {
        var completion: TaskCompletion?
        var accessories: [any RequestAccessory]
        var tag = 0
        var userInfo: [String: any Sendable] = [:]
        var phase = Phase.created
        var isCancelled = false
        /// The request as built, before interceptors adapt it.
        var builtRequest: TransportRequest?
        /// The folder its response is cached in, chosen when it started.
        var cacheFolder: URL?
        var sentRequest: TransportRequest?
        /// The `Cookie` value ``sentRequest``'s jar gave as it went out: the jar has the cookies
        /// its response set by the time the response is stored, and the cache compares the request as sent.
        var sentJarCookieHeader: String?
        var attempt = 0
        /// From sending an attempt until its response is complete.
        var attemptInFlight = false
        /// From a download's last event until the pipeline has let go of its file.
        var isConcluding = false
        var transportTask: (any TransportTask)?
        /// Stops what the task waits for between attempts: an adapt, a retry decision, a backoff.
        var pendingWork: (@Sendable () -> Void)?
        var head: (statusCode: Int, headers: [String: String])?
        var body = Data()
        /// The current attempt's trailer fields, once its body ended.
        var trailers: [String: String] = [:]
        /// The current attempt's interim heads, in order.
        var interimResponses: [Response] = []
        var response: Response?
        var metrics: TransportMetrics?
        var error: ErrandError?
        var startTime = DispatchTime.now()
        var deliveryPredecessor: DispatchGroup?
        var waiters: [CheckedContinuation<Result<Response, ErrandError>, Never>] = []
        var download: DownloadReceiver?
        var upload: ResumableUpload?
        var stream: StreamReceiver?
        var bodyFiles = TemporaryBodyFiles()
        /// What the debug log adds to the task's line, each once: a credential withheld, say.
        var debugNotes: [String] = []

        var outcome: Result<Response, ErrandError> {
            if let error { return .failure(error) }
            if let response { return .success(response) }
            return .failure(.cancelled)
        }
    }
}
