import Errand
import Foundation
import Logging

/// Logs every request an agent runs through a swift-log `Logger`: its start at `.debug`, an
/// attempt that failed and will be retried at `.notice`, and its end at `.info` — `.warning`
/// when it failed.
///
/// Each line carries the request's method and URL, and the end its status, duration, attempt
/// count, error and whether the cache answered, as metadata. Header fields and bodies are never
/// logged; the URL's user information is always masked, and the query items `redaction` names,
/// in the URL and in the URLs an error quotes.
///
/// A request's end is logged before its caller hears of it (``finishesBeforeCaller``), so a
/// command-line tool that exits as soon as its last request returns still logs that request.
///
/// ```swift
/// NetworkConfig.shared.addEventMonitor(LoggingMonitor(logger: Logger(label: "api")))
/// ```
public final class LoggingMonitor: EventMonitor, @unchecked Sendable {  // `lock` guards `startTimes`.
    private let logger: Logger
    private let redaction: Redaction
    private let lock = NSLock()
    private var startTimes: [ObjectIdentifier: ContinuousClock.Instant] = [:]

    /// A monitor logging through `logger`, masking the query items `redaction` names (default
    /// ``Redaction/credentials``: the usual names of tokens, keys and passwords).
    public init(logger: Logger, redaction: Redaction = .credentials) {
        self.logger = logger
        self.redaction = redaction
    }

    /// `true`: a request's end is logged before its callback runs or its `await` returns, on the
    /// monitor's queue; the caller waits the log handler's time for it.
    public var finishesBeforeCaller: Bool { true }

    public func requestDidStart(_ task: RequestTask) {
        lock.withLock { startTimes[ObjectIdentifier(task)] = .now }
        logger.debug("request started", metadata: requestMetadata(task))
    }

    public func request(_ task: RequestTask, didFailAttempt error: ErrandError, willRetry: Bool) {
        guard willRetry else { return }
        var metadata = requestMetadata(task)
        metadata["errand.attempt"] = "\(task.attemptCount)"
        metadata["errand.error"] = "\(redaction.text(error.description))"
        logger.notice("request attempt failed, retrying", metadata: metadata)
    }

    public func request(_ task: RequestTask, didFinish result: Result<Response, ErrandError>) {
        let started = lock.withLock { startTimes.removeValue(forKey: ObjectIdentifier(task)) }
        var metadata = requestMetadata(task)
        metadata["errand.attempts"] = "\(task.attemptCount)"
        if let started {
            metadata["errand.duration_ms"] = "\((ContinuousClock.now - started).milliseconds)"
        }
        if let status = task.response?.statusCode { metadata["http.response.status_code"] = "\(status)" }
        if task.response?.isDataFromCache == true { metadata["errand.from_cache"] = "true" }
        switch result {
        case .success:
            logger.info("request finished", metadata: metadata)
        case .failure(let error):
            metadata["errand.error"] = "\(redaction.text(error.description))"
            logger.warning("request failed", metadata: metadata)
        }
    }

    /// The method and the URL, masked: the one sent, else the one the request resolves to.
    private func requestMetadata(_ task: RequestTask) -> Logger.Metadata {
        var metadata: Logger.Metadata = ["http.request.method": "\(task.request.method.rawValue)"]
        if let url = task.sentRequest?.url {
            metadata["http.request.method"] = "\(task.sentRequest?.method ?? task.request.method.rawValue)"
            metadata["url.full"] = "\(redaction.url(url))"
        } else if let url = URL(string: task.request.url) {
            // Not yet built: the request's own url, relative or absolute, masked all the same.
            metadata["errand.request.url"] = "\(redaction.url(url))"
        }
        return metadata
    }
}

extension Duration {
    /// The whole milliseconds in this duration.
    fileprivate var milliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}
