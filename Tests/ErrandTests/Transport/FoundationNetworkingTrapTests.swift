import ErrandScenarios
import ErrandTestServer
import Foundation
import Testing

@testable import Errand

#if canImport(FoundationNetworking)
    import FoundationNetworking

    /// Answers by which a server, or the network between, made FoundationNetworking end the process
    /// (`fatalError` or a trap inside it, swift-corelibs-foundation 6.3.1): under
    /// ``URLSessionTransport`` each ends its request as it does under ``CurlTransport``, and the
    /// process lives. Each request under URLSessionTransport runs in a child process, so a trap
    /// fails the test, with its message, instead of ending the suite.
    @Suite("URLSessionTransport on Linux survives what FoundationNetworking cannot")
    struct FoundationNetworkingTrapTests {
        /// How one request ended: what the child prints, and what the test compares.
        struct Outcome: Codable, Equatable, Sendable, CustomStringConvertible {
            var status: Int?
            var body: String?
            /// The error's case, and for a transport error its `URLError` code.
            var error: String?

            init(_ task: RequestTask) {
                status = task.response?.statusCode
                body = task.response.map { String(decoding: $0.data, as: UTF8.self) }
                error = task.error.map(Self.summary)
            }

            init(status: Int?, body: String?, error: ErrandError?) {
                self.status = status
                self.body = body
                self.error = error.map(Self.summary)
            }

            private static func summary(_ error: ErrandError) -> String {
                switch error {
                case .transport(let failure): "transport(\(failure.code.rawValue))"
                case .responseTooLarge(let limit): "responseTooLarge(\(limit))"
                default: "\(error)"
                }
            }

            var description: String { "status \(status.map(String.init) ?? "none"), error \(error ?? "none")" }
        }

        private struct Probe: BaseRequest {
            let url: String
            var responseSerializerType: ResponseSerializerType { .data }
            var timeoutInterval: TimeInterval { 20 }
            var timeoutIntervalForResource: TimeInterval? { 30 }
        }

        /// What `/framing/{kind}` sends as its body.
        private static func body(of kind: String) -> String {
            #"{"framing": "\#(kind)"}"#
        }

        private static let childVariable = "ERRAND_FOUNDATION_NETWORKING_TRAP_URL"
        private static let marker = "trap-outcome: "

        /// How `url` ends through `transport`, in this process.
        private static func outcome(of url: String, through transport: any Transport) async -> Outcome {
            let config = NetworkConfig()
            config.callbackQueue = DispatchQueue(label: "errand.foundation-networking-trap-tests.callbacks")
            return Outcome(await NetworkAgent(config: config, transport: transport).finishedTask(Probe(url: url)))
        }

        /// The child's part of every test here: sends the one request through URLSessionTransport
        /// and prints how it ended.
        @Test(.enabled(if: ProcessInfo.processInfo.environment[Self.childVariable] != nil))
        func childSendsOneRequestThroughURLSessionTransport() async throws {
            let url = try #require(ProcessInfo.processInfo.environment[Self.childVariable])
            let outcome = await Self.outcome(of: url, through: URLSessionTransport())
            let line = String(decoding: try JSONEncoder().encode(outcome), as: UTF8.self)
            FileHandle.standardOutput.write(Data("\(Self.marker)\(line)\n".utf8))
        }

        /// How `path` on `server` ends under URLSessionTransport in a child process, and under
        /// CurlTransport here; `nil`, with the issue recorded, when the child died or said nothing.
        private static func outcomes(of path: String, on server: TestServer) async throws -> (
            session: Outcome?, curl: Outcome
        ) {
            let url = server.baseURL + path
            let ending = try await ChildTest.run(
                "childSendsOneRequestThroughURLSessionTransport", environment: [childVariable: url])
            let curl = await outcome(of: url, through: CurlTransport())
            guard ending.status == 0, let line = ending.line(after: marker) else {
                Issue.record("the process ended (exit status \(ending.status)) on \(path):\n\(ending.tail)")
                return (nil, curl)
            }
            return (try JSONDecoder().decode(Outcome.self, from: Data(line.utf8)), curl)
        }

        /// FoundationNetworking read each trailer field as the start of another head, and then,
        /// with no head at the end, stopped: "Transfer completed, but there's no response".
        @Test(arguments: ["/framing/trailers", "/framing/trailers?status=404"])
        func aChunkedBodyWithTrailerFieldsArrivesWhole(_ path: String) async throws {
            let server = try TestServer()
            defer { server.stop() }
            let (session, curl) = try await Self.outcomes(of: path, on: server)
            let status = path.hasSuffix("404") ? 404 : 200
            let expected = Outcome(
                status: status, body: Self.body(of: "trailers"),
                error: status == 200 ? nil : .statusCode(404))
            #expect(curl == expected)
            #expect(session == expected)
        }

        /// A head cut off by an orderly close — a server or proxy going away mid-head — made
        /// FoundationNetworking stop as trailers did, whenever no body length was left to wait for.
        /// It is no answer at all, as an empty reply is not.
        @Test(arguments: ["/framing/head-cut", "/framing/head-cut?fields=3", "/framing/head-cut?interim=1"])
        func aHeadCutOffByACloseIsABadServerResponse(_ path: String) async throws {
            let server = try TestServer()
            defer { server.stop() }
            let (session, curl) = try await Self.outcomes(of: path, on: server)
            let expected = Outcome(status: nil, body: nil, error: .transport(URLError(.badServerResponse)))
            #expect(curl == expected)
            #expect(session == expected)
        }

        /// FoundationNetworking converted libcurl's length, a `Double`, to `Int64`: a
        /// `Content-Length` within 512 of 2^63 overflowed and trapped in its header callback.
        @Test func aContentLengthNear2To63IsTooLargeAtTheHead() async throws {
            let server = try TestServer()
            defer { server.stop() }
            let (session, curl) = try await Self.outcomes(of: "/framing/huge-content-length", on: server)
            let expected = Outcome(
                status: nil, body: nil, error: .responseTooLarge(NetworkConfig().maximumResponseSize))
            #expect(curl == expected)
            #expect(session == expected)
        }

        /// FoundationNetworking resolves a redirect's `Location` before asking its delegate, and
        /// stopped ("Invalid URL") when the URL it built had no valid form: a protocol-relative
        /// reference to an IPv6 literal. Errand follows it itself: nothing listens there.
        @Test func aProtocolRelativeRedirectToAnIPv6LiteralIsFollowed() async throws {
            let server = try TestServer()
            defer { server.stop() }
            let (session, curl) = try await Self.outcomes(
                of: "/redirect-to?url=%2F%2F%5B%3A%3A1%5D%3A\(server.port)%2Fget", on: server)
            let expected = Outcome(status: nil, body: nil, error: .transport(URLError(.cannotConnectToHost)))
            #expect(curl == expected)
            #expect(session == expected)
        }

        /// A protocol class of the app's own keeps on the session only the requests it takes;
        /// FoundationNetworking's own protocol would serve the others, so they go through libcurl.
        @Test func onlyTheRequestsAnAppsProtocolClassTakesStayOnTheSession() async throws {
            let server = try TestServer()
            defer { server.stop() }
            let configuration = URLSessionConfiguration.ephemeral
            configuration.protocolClasses = [CannedStreamProtocol.self] + (configuration.protocolClasses ?? [])
            let transport = URLSessionTransport(configuration: configuration)
            let canned = await Self.outcome(of: "http://\(CannedStreamProtocol.host)/feed", through: transport)
            #expect(
                canned
                    == Outcome(
                        status: 200, body: String(decoding: CannedStreamProtocol.body, as: UTF8.self), error: nil))
            #expect(transport.curlTransport == nil, "the app's protocol class served it")
            let served = await Self.outcome(of: server.baseURL + "/framing/no-reason", through: transport)
            #expect(served == Outcome(status: 200, body: Self.body(of: "no-reason"), error: nil))
            #expect(transport.curlTransport != nil, "libcurl served it")
        }

        /// Not a trap, but a failure FoundationNetworking has: `HTTP/1.1 200` without a reason
        /// phrase failed with "Failed writing header" (`.unknown`). It is a 200 like any other.
        @Test func aStatusLineWithoutAReasonPhraseIsAnswered() async throws {
            let server = try TestServer()
            defer { server.stop() }
            let url = server.baseURL + "/framing/no-reason"
            let expected = Outcome(status: 200, body: Self.body(of: "no-reason"), error: nil)
            #expect(await Self.outcome(of: url, through: CurlTransport()) == expected)
            #expect(await Self.outcome(of: url, through: URLSessionTransport()) == expected)
        }
    }
#endif
