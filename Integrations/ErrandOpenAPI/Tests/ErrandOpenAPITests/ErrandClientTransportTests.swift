import Errand
import ErrandOpenAPI
import ErrandTestServer
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Testing

/// A client generated from `openapi.yaml` by swift-openapi-generator's build plugin, sending
/// through Errand to the embedded test server.
@Suite("ErrandClientTransport")
struct ErrandClientTransportTests {
    @Test func anOperationGoesThroughTheAgentWithItsQueryHeadersAndID() async throws {
        let harness = try Harness()
        defer { harness.server.stop() }

        let output = try await harness.client.echo(
            query: .init(q: "a b&c", tag: ["x", "y"]), headers: .init(xTrace: "trace-1"))

        let echo = try output.ok.body.json
        #expect(echo.args.additionalProperties["q"]?.value as? String == "a b&c")
        let tags = echo.args.additionalProperties["tag"]?.value as? [(any Sendable)?]
        #expect(tags?.compactMap { $0 as? String } == ["x", "y"])
        #expect(echo.headers.additionalProperties["X-Trace"] == "trace-1")
        #expect(echo.headers.additionalProperties["Accept"] == "application/json")
        #expect(harness.observer.operationIDs.withLock { $0 } == ["echo"], "interceptors see the operation id")
        #expect(harness.observer.finished.withLock { $0 } == [.success(200)])
    }

    @Test func aChatStreamsItsServerSentEventsThroughTheGeneratedDecoder() async throws {
        let harness = try Harness()
        defer { harness.server.stop() }

        let output = try await harness.client.createChatCompletion(
            headers: .init(accept: [.init(contentType: .textEventStream)]),
            body: .json(.init(model: "errand-1", messages: [.init(role: "user", content: "Hello")], stream: true)))

        let events = try output.ok.body.textEventStream.asDecodedServerSentEventsWithJSONData(
            of: Components.Schemas.ChatChunk.self, while: { $0 != ArraySlice("[DONE]".utf8) })
        var reply = ""
        for try await event in events {
            reply += event.data?.choices.first?.delta.content ?? ""
        }
        #expect(reply == "You said: Hello. This reply streams one token at a time.")
    }

    @Test func anEndlessStreamIsReadAsItArrivesAndLeavingItEndsTheTransfer() async throws {
        let harness = try Harness()
        defer { harness.server.stop() }

        // A transport that collected the body first would never return from this call.
        let output = try await harness.client.endlessEvents()
        let events = try output.ok.body.textEventStream.asDecodedServerSentEventsWithJSONData(
            of: Components.Schemas.Tick.self)
        var seen: [Int] = []
        for try await event in events {
            seen.append(try #require(event.data?.n))
            if seen.count == 3 { break }
        }
        #expect(seen == [1, 2, 3])
        #expect(await harness.observer.outcomes.first { _ in true } == .failure(.cancelled))
    }

    @Test func cancellingTheCallingTaskCancelsTheTransfer() async throws {
        let harness = try Harness()
        defer { harness.server.stop() }
        let (firstEvent, eventArrived) = AsyncStream.makeStream(of: Void.self)

        let reader = Task {
            let output = try await harness.client.endlessEvents()
            for try await _ in try output.ok.body.textEventStream.asDecodedServerSentEvents() {
                eventArrived.yield()
            }
        }
        _ = await firstEvent.first { _ in true }
        reader.cancel()

        await #expect(throws: (any Error).self) { try await reader.value }
        #expect(await harness.observer.outcomes.first { _ in true } == .failure(.cancelled))
    }

    @Test func aMultipartFormIsSentAndReadBack() async throws {
        let harness = try Harness()
        defer { harness.server.stop() }

        let output = try await harness.client.submitForm(
            body: .multipartForm([
                .title(.init(payload: .init(body: "Quarterly report"))),
                .attachment(.init(payload: .init(body: "line 1\nline 2\n"), filename: "notes.txt")),
            ]))

        let echo = try output.ok.body.json
        #expect(echo.form.additionalProperties == ["title": "Quarterly report"])
        #expect(echo.files.additionalProperties == ["attachment": "line 1\nline 2\n"])
    }

    @Test(arguments: [false, true])
    func aStreamedUploadGoesOutChunkedOrWithItsLength(lengthKnown: Bool) async throws {
        let harness = try Harness()
        defer { harness.server.stop() }
        let chunk = Data((0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let count = 48
        let (chunks, continuation) = AsyncStream.makeStream(of: ArraySlice<UInt8>.self)
        let producer = Task {
            for _ in 0..<count { continuation.yield(ArraySlice(chunk)) }
            continuation.finish()
        }
        let total = Int64(chunk.count * count)

        let output = try await harness.client.upload(
            body: .binary(HTTPBody(chunks, length: lengthKnown ? .known(total) : .unknown)))
        await producer.value

        let receipt = try output.ok.body.json
        var checksum = Checksum()
        for _ in 0..<count { checksum.update(chunk) }
        #expect(receipt.bytes == total)
        #expect(receipt.checksum == checksum.hexDigits)
        let sent = try #require(harness.server.receivedRequests(path: "/upload").first)
        #expect(sent.header("Content-Length") == (lengthKnown ? String(total) : nil))
        #expect(sent.header("Transfer-Encoding") == (lengthKnown ? nil : "chunked"))
    }

    @Test func aBodyThatFailsWhileSentFailsTheCallWithItsError() async throws {
        let harness = try Harness()
        defer { harness.server.stop() }
        let chunks = AsyncThrowingStream<ArraySlice<UInt8>, any Error> { continuation in
            continuation.yield(ArraySlice(repeating: 7, count: 1000))
            continuation.finish(throwing: ProducerFailure())
        }

        let error = await #expect(throws: ClientError.self) {
            _ = try await harness.client.upload(body: .binary(HTTPBody(chunks, length: .unknown)))
        }
        #expect(error?.underlyingError as? ProducerFailure == ProducerFailure())
        #expect(error?.operationID == "upload")
    }

    @Test func everyStatusComesBackAsAResponseForTheGeneratedCodeToJudge() async throws {
        let harness = try Harness()
        defer { harness.server.stop() }

        #expect(try await harness.client.status(path: .init(code: 200)) == .ok(.init()))
        #expect(try await harness.client.status(path: .init(code: 404)) == .notFound(.init()))
        #expect(try await harness.client.status(path: .init(code: 500)) == .internalServerError(.init()))
        guard case .undocumented(statusCode: 418, let payload) = try await harness.client.status(path: .init(code: 418))
        else {
            Issue.record("418 is no documented status")
            return
        }
        let teapot = try await String(collecting: try #require(payload.body), upTo: 1 << 16)
        #expect(teapot.contains("teapot"), "the refused status keeps its body")

        let badRequest = try await harness.client.createChatCompletion(body: .json(.init(model: "", messages: [])))
        #expect(try badRequest.badRequest.body.json.error.message == "you must provide a model parameter")
    }

    @Test func aRetryPolicyRetriesItsStatusesBeforeTheLastResponseComesBack() async throws {
        let harness = try Harness { $0.addInterceptor(RetryPolicy(maxAttempts: 3, baseDelay: 0.001, maxDelay: 0.01)) }
        defer { harness.server.stop() }

        let unavailable = try await harness.client.status(path: .init(code: 503))
        guard case .undocumented(statusCode: 503, _) = unavailable else {
            Issue.record("503 came back as \(unavailable)")
            return
        }
        #expect(harness.server.receivedRequests(path: "/status/503").count == 3)
        #expect(try await harness.client.status(path: .init(code: 404)) == .notFound(.init()))
        #expect(harness.server.receivedRequests(path: "/status/404").count == 1)
    }

    @Test func aBodyTheRuntimeCanReadAgainIsSentAgainOnARetry() async throws {
        let harness = try Harness { $0.addInterceptor(RetryPolicy(maxAttempts: 2, baseDelay: 0.001, maxDelay: 0.01)) }
        defer { harness.server.stop() }
        let transport = ErrandClientTransport(agent: harness.agent)
        let body = #"{"note": "kept for the second attempt"}"#

        let (response, _) = try await transport.send(
            HTTPRequest(
                method: .put, scheme: nil, authority: nil, path: "/flaky/resent?failures=1",
                headerFields: [.contentType: "application/json"]),
            body: HTTPBody(body), baseURL: try #require(URL(string: harness.server.baseURL)), operationID: "put")

        #expect(response.status == .ok)
        let attempts = harness.server.receivedRequests(path: "/flaky/resent")
        #expect(attempts.count == 2)
        #expect(attempts.map { $0.header("Content-Length") } == [String(body.utf8.count), String(body.utf8.count)])
    }

    /// A refusal whose JSON body is larger than the 64 KiB a refused stream keeps by default.
    static func setLongRefusal(on server: TestServer) throws -> (message: String, body: Data) {
        let message = String(repeating: "This request was refused for a long reason. ", count: 5_000)
        let body = try JSONSerialization.data(withJSONObject: ["error": ["message": message, "type": "invalid"]])
        server.setCacheableResource(
            "refusal",
            CacheableResource(
                status: 422, body: String(decoding: body, as: UTF8.self), headers: ["Content-Type": "application/json"])
        )
        return (message, body)
    }

    @Test func anErrorBodyLargerThan64KiBArrivesWholeAndDecodes() async throws {
        let harness = try Harness()
        defer { harness.server.stop() }
        let (message, _) = try Self.setLongRefusal(on: harness.server)

        let refused = try await harness.client.storedResource(path: .init(name: "refusal"))
        #expect(try refused.unprocessableContent.body.json.error.message == message)
    }

    @Test func theHeadSaysTheLengthOfTheBodyItComesWith() async throws {
        let harness = try Harness()
        defer { harness.server.stop() }
        let (_, sent) = try Self.setLongRefusal(on: harness.server)
        let transport = ErrandClientTransport(agent: harness.agent)
        let baseURL = try #require(URL(string: harness.server.baseURL))

        let (refused, refusal) = try await transport.send(
            HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/http-cache/refusal"), body: nil,
            baseURL: baseURL, operationID: "storedResource")
        let received = try await Data(collecting: try #require(refusal), upTo: .max)
        // Compared as a whole: a failed `==` on Data would be reported as a slow byte-by-byte diff.
        #expect(received.count == sent.count && received.elementsEqual(sent))
        #expect(refused.headerFields[.contentLength] == String(received.count))

        // A body the transport decoded is not as long as the encoded one the field counted.
        let (decoded, body) = try await transport.send(
            HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/gzip"), body: nil, baseURL: baseURL,
            operationID: "gzip")
        let json = try await Data(collecting: try #require(body), upTo: 1 << 20)
        #expect(try JSONSerialization.jsonObject(with: json) is [String: Any])
        #expect(decoded.headerFields[.contentLength].map { Int($0) == json.count } ?? true)
    }

    @Test func anErrorBodyPastMaximumResponseSizeFailsTheCallSayingSo() async throws {
        let harness = try Harness { $0.maximumResponseSize = 100_000 }
        defer { harness.server.stop() }
        _ = try Self.setLongRefusal(on: harness.server)

        let error = await #expect(throws: ClientError.self) {
            _ = try await harness.client.storedResource(path: .init(name: "refusal"))
        }
        #expect(error?.underlyingError as? ErrandError == .responseTooLarge(100_000))
    }

    @Test func repeatedSetCookieFieldsStayApart() async throws {
        let harness = try Harness()
        defer { harness.server.stop() }
        let transport = ErrandClientTransport(agent: harness.agent)
        let query = "Set-Cookie=a%3D1%3B%20Expires%3DWed%2C%2021%20Oct%202026%2007%3A28%3A00%20GMT&Set-Cookie=b%3D2"

        let (response, _) = try await transport.send(
            HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/response-headers?\(query)"), body: nil,
            baseURL: try #require(URL(string: harness.server.baseURL)), operationID: "cookies")

        #expect(response.headerFields[values: .setCookie] == ["a=1; Expires=Wed, 21 Oct 2026 07:28:00 GMT", "b=2"])
    }

    @Test func aMethodErrandCannotSendFailsNamingIt() async throws {
        let harness = try Harness()
        defer { harness.server.stop() }
        let transport = ErrandClientTransport(agent: harness.agent)

        let error = await #expect(throws: ErrandError.self) {
            _ = try await transport.send(
                HTTPRequest(method: .connect, scheme: nil, authority: "127.0.0.1:1", path: nil), body: nil,
                baseURL: try #require(URL(string: harness.server.baseURL)), operationID: "tunnel")
        }
        #expect("\(error.map { "\($0)" } ?? "")".contains("CONNECT"))
    }

    @Test func aMethodOfItsOwnIsSentAsItIs() async throws {
        let harness = try Harness()
        defer { harness.server.stop() }
        let transport = ErrandClientTransport(agent: harness.agent)

        let (response, body) = try await transport.send(
            HTTPRequest(
                method: try #require(.init("QUERY")), scheme: nil, authority: nil, path: "/anything/q",
                headerFields: [.contentType: "application/json"]),
            body: HTTPBody("{\"since\": 1}"), baseURL: try #require(URL(string: harness.server.baseURL)),
            operationID: "query")

        #expect(response.status == .ok)
        let echo = try await Data(collecting: try #require(body), upTo: 1 << 16)
        let object = try #require(try JSONSerialization.jsonObject(with: echo) as? [String: Any])
        #expect(object["method"] as? String == "QUERY")
        #expect(object["json"] as? [String: Int] == ["since": 1])
    }
}
