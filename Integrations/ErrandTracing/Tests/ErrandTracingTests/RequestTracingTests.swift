import Errand
import ErrandTracing
import Foundation
import InMemoryTracing
import Testing
import Tracing

/// The span `addTracing()` makes for a request: its parent, attributes, events and status, and
/// the context the server receives.
@Suite("RequestTracing")
struct RequestTracingTests {
    struct Request: BaseRequest {
        var url: String
        var interceptors: [any RequestInterceptor] = []
        var responseSerializerType: ResponseSerializerType { .data }
    }

    let tracer = InMemoryTracer()
    let sent = Locked<[TransportRequest]>([])

    func makeAgent() -> NetworkAgent {
        let config = NetworkConfig()
        config.baseUrl = "https://api.example.com"
        config.addTracing(tracer: tracer)
        return NetworkAgent(
            config: config,
            transport: StubTransport { [sent] request throws(ErrandError) in
                sent.withLock { $0.append(request) }
                if request.url.path == "/unreachable" {
                    let failure = URLError(.cannotConnectToHost, userInfo: [NSURLErrorFailingURLErrorKey: request.url])
                    throw .transport(failure)
                }
                return request.url.path == "/broken" ? Response(statusCode: 503) : Response(statusCode: 200)
            })
    }

    @Test func aRequestIsAClientSpanUnderTheCallersWithItsContextSentOn() async throws {
        let agent = makeAgent()
        let parent = tracer.startSpan("screen", ofKind: .internal)
        try await InstrumentationContext.withValue(parent.context) {
            _ = try await agent.response(Request(url: "/items?access_token=s3cret"))
        }
        parent.end()

        let span = try #require(tracer.finishedSpans.first { $0.operationName == "GET" })
        #expect(span.kind == .client)
        #expect(span.parentSpanID == parent.spanContext.spanID)
        #expect(span.traceID == parent.spanContext.traceID)
        #expect(span.attributes["http.request.method"]?.toSpanAttribute() == "GET")
        #expect(
            span.attributes["url.full"]?.toSpanAttribute()
                == "https://api.example.com/items?access_token=<redacted>")
        #expect(span.attributes["server.address"]?.toSpanAttribute() == "api.example.com")
        #expect(span.attributes["server.port"]?.toSpanAttribute() == 443)
        #expect(span.attributes["http.response.status_code"]?.toSpanAttribute() == 200)
        #expect(span.status == nil)

        let headers = try #require(sent.withLock { $0.first }?.headers)
        #expect(headers[InMemoryTracer.spanIDKey] == span.spanID, "the server is told the request's span")
        #expect(headers[InMemoryTracer.traceIDKey] == parent.spanContext.traceID)
    }

    @Test func aRetriedFailureRecordsTheResendAndItsErrorType() async throws {
        let agent = makeAgent()
        let request = Request(url: "/broken", interceptors: [RetryPolicy(maxAttempts: 2, baseDelay: 0)])
        _ = try? await agent.response(request)

        let span = try #require(tracer.finishedSpans.first)
        #expect(span.attributes["http.request.resend_count"]?.toSpanAttribute() == 1)
        #expect(span.events.map(\.name) == ["http.request.resend"])
        #expect(span.attributes["error.type"]?.toSpanAttribute() == "503")
        #expect(span.status?.code == .error)
        #expect(span.errors.count == 1)
        #expect(sent.withLock { $0.count } == 2)
    }

    @Test func anErrorQuotingTheURLIsRecordedWithItMasked() async throws {
        _ = try? await makeAgent().response(Request(url: "/unreachable?access_token=s3cret"))

        let span = try #require(tracer.finishedSpans.first)
        let recorded = try #require(span.errors.first).error
        #expect("\(recorded)".contains("access_token=<redacted>"))
        #expect(!"\(recorded)".contains("s3cret"))
    }
}

/// A value behind a lock, for what a stub transport sees.
final class Locked<Value>: @unchecked Sendable {  // `lock` guards `value`.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) -> Result) -> Result {
        lock.withLock { body(&value) }
    }
}
