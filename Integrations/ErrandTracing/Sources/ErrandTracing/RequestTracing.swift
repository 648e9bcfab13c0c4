import Errand
import Foundation
import Tracing

/// A client span for every request an agent runs, through swift-distributed-tracing, with the
/// trace context sent on in the request's header fields — W3C `traceparent` with the usual
/// instrument — so the server's spans join the caller's trace.
///
/// ```swift
/// NetworkConfig.shared.addTracing()
/// ```
///
/// The span starts when the request starts, as a child of the caller's
/// `InstrumentationContext.current`, and is named after the method, as OpenTelemetry names HTTP
/// client spans. It carries `http.request.method`, `url.full` (masked by a ``Redaction``),
/// `server.address`, `server.port`, `http.request.resend_count` when an attempt was sent again,
/// `http.response.status_code`, and for a failure `error.type` with an error status. Each
/// attempt sent again adds an `http.request.resend` event. The span ends when the request
/// finishes, before its callbacks run.
public struct RequestTracing: Sendable {
    private let spans: SpanTable

    /// Tracing by `tracer` — by default the one bootstrapped, or bound by `withTracer`, when
    /// each request starts — with URLs masked by `redaction` (default ``Redaction/credentials``).
    public init(tracer: (any Tracer)? = nil, redaction: Redaction = .credentials) {
        spans = SpanTable(tracer: tracer, redaction: redaction)
    }

    /// Starts and ends each request's span, on the thread that starts the request: the caller's
    /// task, whose context is the span's parent.
    public var accessory: any RequestAccessory { SpanAccessory(spans: spans) }

    /// Describes each attempt on the span and puts the span's context in its header fields.
    public var interceptor: any RequestInterceptor { ContextInjector(spans: spans) }
}

extension NetworkConfig {
    /// Traces every request made from now on: adds a ``RequestTracing``'s accessory and
    /// interceptor. The interceptor runs after those already added, so the context goes into the
    /// request as it is sent.
    public func addTracing(tracer: (any Tracer)? = nil, redaction: Redaction = .credentials) {
        let tracing = RequestTracing(tracer: tracer, redaction: redaction)
        addRequestAccessory(tracing.accessory)
        addInterceptor(tracing.interceptor)
    }
}

/// The open span of each running request.
final class SpanTable: @unchecked Sendable {  // `lock` guards `spans`.
    private let tracer: (any Tracer)?
    let redaction: Redaction
    private let lock = NSLock()
    private var spans: [ObjectIdentifier: any Span] = [:]

    init(tracer: (any Tracer)?, redaction: Redaction) {
        self.tracer = tracer
        self.redaction = redaction
    }

    func start(for task: RequestTask) {
        let method = task.request.method.rawValue
        let span = (tracer ?? InstrumentationSystem.tracer).startSpan(
            method, context: InstrumentationContext.current ?? .topLevel, ofKind: .client)
        span.attributes["http.request.method"] = method
        lock.withLock { spans[ObjectIdentifier(task)] = span }
    }

    func span(of task: RequestTask) -> (any Span)? {
        lock.withLock { spans[ObjectIdentifier(task)] }
    }

    /// What puts a context into header fields: the tracer given, else the one bootstrapped.
    var instrument: any Instrument { tracer ?? InstrumentationSystem.instrument }

    func end(for task: RequestTask) {
        guard let span = lock.withLock({ spans.removeValue(forKey: ObjectIdentifier(task)) }) else { return }
        if let status = task.response?.statusCode { span.attributes["http.response.status_code"] = status }
        if let error = task.error {
            span.attributes["error.type"] = error.typeName
            // Its description quotes the URL that failed: masked as `url.full` is.
            span.recordError(MaskedError(description: redaction.text(error.description)))
            span.setStatus(SpanStatus(code: .error))
        }
        span.end()
    }
}

/// Starts a request's span when it starts, and ends it when it finishes.
struct SpanAccessory: RequestAccessory {
    let spans: SpanTable

    func requestWillStart(_ task: RequestTask) { spans.start(for: task) }
    func requestWillStop(_ task: RequestTask) { spans.end(for: task) }
}

/// Describes each attempt on its request's span, and sends the span's context with it.
struct ContextInjector: RequestInterceptor {
    let spans: SpanTable

    func adapt(_ request: TransportRequest, for task: RequestTask) async throws(ErrandError) -> TransportRequest {
        guard let span = spans.span(of: task) else { return request }
        span.attributes["url.full"] = spans.redaction.url(request.url)
        if let host = request.url.host { span.attributes["server.address"] = host }
        if let port = request.url.port ?? Self.defaultPorts[request.url.scheme?.lowercased() ?? ""] {
            span.attributes["server.port"] = port
        }
        // Attempts already sent: this one is counted once it goes out.
        let resends = task.attemptCount
        if resends > 0 {
            span.attributes["http.request.resend_count"] = resends
            span.addEvent(
                SpanEvent(
                    name: "http.request.resend", attributes: ["http.request.resend_count": .int64(Int64(resends))]))
        }
        var sent = request
        spans.instrument.inject(span.context, into: &sent.headers, using: HeaderInjector())
        return sent
    }

    private static let defaultPorts = ["http": 80, "https": 443, "ws": 80, "wss": 443]
}

/// Writes the context's fields into a request's header fields.
struct HeaderInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) {
        carrier[key] = value
    }
}

/// An ``ErrandError`` as a span records it, with the URLs its description quotes masked.
struct MaskedError: Error, CustomStringConvertible {
    let description: String
}
