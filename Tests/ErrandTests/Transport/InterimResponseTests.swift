import ErrandTestServer
import Foundation
import Testing

@testable import Errand

/// Interim (1xx) heads reach the task, its stream and monitors, in order, under the transport the
/// suite runs with; a head past libcurl's bound is refused rather than held.
@Suite("Interim responses")
struct InterimResponseTests {
    /// Hears every head, interim or final, in order.
    final class HeadLog: EventMonitor {
        private let heads = Locked<[String]>([])

        var recorded: [String] { heads[\.self] }

        func request(_ task: RequestTask, didReceiveInterim response: Response) {
            heads.withLock { $0.append("interim \(response.statusCode) \(response.value(forHeader: "Link") ?? "")") }
        }

        func request(_ task: RequestTask, didReceive response: Response) {
            heads.withLock { $0.append("final \(response.statusCode)") }
        }

        func request(_ task: RequestTask, didFinish result: Result<Response, ErrandError>) {
            heads.withLock { $0.append("finished") }
        }
    }

    struct Probe: BaseRequest {
        var url: String
        var responseSerializerType: ResponseSerializerType { .data }
    }

    let server: TestServer
    let config = NetworkConfig()
    let log = HeadLog()

    init() throws {
        server = try TestServer()
        config.baseUrl = server.baseURL
        config.callbackQueue = DispatchQueue(label: "errand.interim-tests.callbacks")
        config.addEventMonitor(log)
    }

    @Test func earlyHintsAndOtherInterimHeadsReachTheTaskAndMonitorsInOrder() async throws {
        let task = await NetworkAgent(config: config).finishedTask(Probe(url: "/framing/interim?codes=103,104,103"))
        #expect(task.error == nil)
        #expect(task.response?.statusCode == 200)
        #expect(task.interimResponses.map(\.statusCode) == [103, 104, 103])
        #expect(
            task.interimResponses.map { $0.value(forHeader: "Link") }
                == (0..<3).map { "</style-\($0).css>; rel=preload" })
        try await eventually { log.recorded.last == "finished" }
        #expect(
            log.recorded == [
                "interim 103 </style-0.css>; rel=preload", "interim 104 </style-1.css>; rel=preload",
                "interim 103 </style-2.css>; rel=preload", "final 200", "finished",
            ])
    }

    @Test func aStreamShowsTheInterimHeadsThatCameBeforeIt() async throws {
        let stream = try await NetworkAgent(config: config).stream(Probe(url: "/framing/interim"))
        #expect(stream.interimResponses.map(\.statusCode) == [103])
        #expect(try await stream.collect(upTo: 1 << 10) == Data(#"{"framing": "interim"}"#.utf8))
    }

    @Test func aResponseWithoutInterimHeadsHasNone() async throws {
        let task = await NetworkAgent(config: config).finishedTask(Probe(url: "/get"))
        #expect(task.response?.statusCode == 200)
        #expect(task.interimResponses.isEmpty)
    }

    @Test func aHeadPastItsBoundIsABadServerResponse() async throws {
        // 20,000 fields of about 25 bytes: over the 300 KiB libcurl allows a head.
        let task = await NetworkAgent(config: config).finishedTask(Probe(url: "/fault/many-headers?count=20000"))
        guard case .transport(let failure) = task.error else {
            Issue.record("a 500 KiB head was taken: \(String(describing: task.error))")
            return
        }
        #expect(failure.code == .badServerResponse)
    }
}
