import CoreMetrics
import Errand
import Foundation

/// Counts and times every request an agent runs through swift-metrics, for whichever backend
/// the process bootstrapped (Prometheus, StatsD, OpenTelemetry…).
///
/// | Metric | Kind | Dimensions |
/// | --- | --- | --- |
/// | `errand.requests` | counter | `http.request.method`, `server.address`, `status_class` |
/// | `errand.request.duration` | timer | `http.request.method`, `server.address`, `status_class` |
/// | `errand.failures` | counter | `http.request.method`, `server.address`, `error.type` |
/// | `errand.retries` | counter | `http.request.method`, `server.address` |
/// | `errand.request.body.bytes`, `errand.response.body.bytes` | counter | `http.request.method`, `server.address` |
///
/// `status_class` is `2xx`…`5xx`, `cached` for an answer from the cache, or `none` when no
/// response came; `server.address` is `none` for a request that went to no server. Dimension values are bounded, so that no backend is flooded with series: no
/// URL path ever appears, methods outside the usual ones read `_OTHER`, and hosts beyond the
/// first `maximumHosts` read `_OTHER`.
///
/// ```swift
/// NetworkConfig.shared.addEventMonitor(MetricsMonitor())
/// ```
public final class MetricsMonitor: EventMonitor, @unchecked Sendable {  // `lock` guards both dictionaries.
    private let prefix: String
    private let maximumHosts: Int
    private let factory: any MetricsFactory
    private let lock = NSLock()
    private var startTimes: [ObjectIdentifier: ContinuousClock.Instant] = [:]
    private var hosts: Set<String> = []

    /// A monitor whose metrics are named `prefix` (default `errand`) followed by the names above,
    /// counting at most `maximumHosts` (default 32) hosts apart, made by `factory` (default the
    /// one `MetricsSystem.bootstrap` installed, read now).
    public init(prefix: String = "errand", maximumHosts: Int = 32, factory: any MetricsFactory = MetricsSystem.factory)
    {
        self.prefix = prefix
        self.maximumHosts = maximumHosts
        self.factory = factory
    }

    public func requestDidStart(_ task: RequestTask) {
        lock.withLock { startTimes[ObjectIdentifier(task)] = .now }
    }

    public func request(_ task: RequestTask, didFailAttempt error: ErrandError, willRetry: Bool) {
        guard willRetry else { return }
        Counter(label: "\(prefix).retries", dimensions: baseDimensions(task), factory: factory).increment()
    }

    public func request(_ task: RequestTask, didFinish result: Result<Response, ErrandError>) {
        let started = lock.withLock { startTimes.removeValue(forKey: ObjectIdentifier(task)) }
        let base = baseDimensions(task)
        let byStatus = base + [("status_class", statusClass(task.response))]
        Counter(label: "\(prefix).requests", dimensions: byStatus, factory: factory).increment()
        if let started {
            let elapsed = ContinuousClock.now - started
            Timer(label: "\(prefix).request.duration", dimensions: byStatus, factory: factory)
                .recordNanoseconds(elapsed.nanoseconds)
        }
        if case .failure(let error) = result {
            let dimensions = base + [("error.type", error.typeName)]
            Counter(label: "\(prefix).failures", dimensions: dimensions, factory: factory).increment()
        }
        if let sent = task.sentRequest?.body?.count, sent > 0 {
            Counter(label: "\(prefix).request.body.bytes", dimensions: base, factory: factory).increment(by: sent)
        }
        if let response = task.response, !response.isDataFromCache, !response.data.isEmpty {
            Counter(label: "\(prefix).response.body.bytes", dimensions: base, factory: factory)
                .increment(by: response.data.count)
        }
    }

    private func baseDimensions(_ task: RequestTask) -> [(String, String)] {
        let method = task.sentRequest?.method ?? task.request.method.rawValue
        return [
            ("http.request.method", Self.knownMethods.contains(method) ? method : "_OTHER"),
            ("server.address", boundedHost(task.sentRequest?.url.host)),
        ]
    }

    /// `host`, or `_OTHER` once `maximumHosts` others have been seen; `none` before a request is built.
    private func boundedHost(_ host: String?) -> String {
        guard let host = host?.lowercased() else { return "none" }
        return lock.withLock {
            if hosts.contains(host) { return host }
            guard hosts.count < maximumHosts else { return "_OTHER" }
            hosts.insert(host)
            return host
        }
    }

    private func statusClass(_ response: Response?) -> String {
        guard let response else { return "none" }
        if response.isDataFromCache { return "cached" }
        return "\(response.statusCode / 100)xx"
    }

    private static let knownMethods: Set<String> = [
        "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT",
    ]
}

extension Duration {
    /// The whole nanoseconds in this duration, saturating.
    fileprivate var nanoseconds: Int64 {
        let (seconds, overflow) = components.seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : seconds + components.attoseconds / 1_000_000_000
    }
}
