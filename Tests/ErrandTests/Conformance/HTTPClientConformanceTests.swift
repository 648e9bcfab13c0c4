import ErrandTestServer
import Foundation
import Testing

@testable import Errand

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The cases of the HTTP client conformance suite of Apple's swift-http-api-proposal
/// (`Sources/HTTPClientConformance`), each through the API an Errand user reaches for, against
/// `/conformance/` on ``TestServer``, which answers byte for byte as the suite's servers do.
/// Under the transport the suite runs with (`ERRAND_TRANSPORT`), so CI checks both.
@Suite("HTTP client conformance (swift-http-api-proposal)")
struct HTTPClientConformanceTests {
    /// One call of the suite: every status is a response, as the suite's client returns them.
    struct Call: BaseRequest {
        var url: String
        var method: HTTPMethod = .get
        var headers: [String: String] = [:]
        var uploadBody: UploadBody?
        var followsHTTPCaching = false
        var responseSerializerType: ResponseSerializerType { .data }
        var timeoutInterval: TimeInterval { 600 }

        init(_ name: String, method: HTTPMethod = .get) {
            url = "/conformance/" + name
            self.method = method
        }

        func statusCodeValidator(_ code: Int) -> Bool { true }
    }

    /// What `/conformance/request` saw.
    struct Echoed: Decodable {
        let params: [String: [String]]
        let headers: [String: [String]]
        let body: String
        let method: String
        let trailers: [String: [String]]

        /// The values of the field `name`, case aside, each split at commas.
        func values(of name: String) -> [String] {
            headers.filter { $0.key.lowercased() == name.lowercased() }.values.flatMap { $0 }
                .flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
        }
    }

    let server: TestServer
    let agent: NetworkAgent
    private let cacheDirectory = FileManager.default.temporaryDirectory.appendingPathComponent(
        "errand-conformance-\(UUID().uuidString)")

    /// An agent of its own, with its own cookies and cache: every server here is 127.0.0.1, whose
    /// cookies any other test's requests would carry.
    init() throws {
        server = try TestServer()
        let config = NetworkConfig()
        config.baseUrl = server.baseURL
        config.callbackQueue = DispatchQueue(label: "errand.conformance-tests.callbacks")
        config.cacheDirectory = cacheDirectory
        agent = NetworkAgent(config: config)
    }

    private func failure(of call: Call) async -> ErrandError? {
        do {
            _ = try await agent.response(call)
            return nil
        } catch {
            return error
        }
    }

    private func echoed(_ call: Call) async throws -> Echoed {
        let response = try await agent.response(call)
        #expect(response.statusCode == 200)
        return try response.decode(Echoed.self)
    }

    private static func stream(_ chunks: [Data], length: Int64?) -> UploadBody {
        .stream(
            AsyncStream { continuation in
                chunks.forEach { continuation.yield($0) }
                continuation.finish()
            }, length: length)
    }

    // MARK: Malformed and edge answers

    @Test func anAnswerThatIsNotHTTPFails() async {
        guard case .transport = await failure(of: Call("not_http")) else {
            Issue.record("FOOBAR was taken as a response")
            return
        }
    }

    @Test func aStatusLineSpelledHttpInLowerCaseIsABadServerResponse() async {
        let error = await failure(of: Call("http_case"))
        guard case .transport(let failure) = error else {
            Issue.record("Http/1.1 200 OK was taken: \(String(describing: error))")
            return
        }
        #expect(failure.code == .badServerResponse)
        #expect(failure.localizedDescription.contains("Http/1.1 200 OK"), "\(failure.localizedDescription)")
    }

    @Test func aStatusLineWithoutAReasonIsTaken() async throws {
        #expect(try await agent.response(Call("no_reason")).statusCode == 200)
    }

    @Test(arguments: [("204_with_cl", 204), ("304_with_cl", 304)])
    func aContentLengthOnAStatusWithoutABodyReadsNoBody(_ name: String, status: Int) async throws {
        let response = try await agent.response(Call(name))
        #expect(response.statusCode == status)
        #expect(response.data.isEmpty)
    }

    @Test(arguments: ["incomplete_body", "conflicting_cl"])
    func aBodyShorterThanItsLengthOrWithConflictingLengthsFails(_ name: String) async {
        guard case .transport = await failure(of: Call(name)) else {
            Issue.record("\(name) was taken as a whole response")
            return
        }
    }

    @Test func aBodyWithoutALengthEndsWithTheConnection() async throws {
        let response = try await agent.response(Call("no_length_hint"))
        #expect(response.statusCode == 200)
        #expect(response.string == "1234")
    }

    // MARK: Methods, bodies, codings

    @Test(arguments: [HTTPMethod.head, .get, .put, .post, .delete])
    func everyMethodGetsAnEmptyAnswerWithoutTrailers(_ method: HTTPMethod) async throws {
        let response = try await agent.response(Call("200", method: method))
        #expect(response.statusCode == 200)
        #expect(response.data.isEmpty)
        #expect(response.trailers.isEmpty)
    }

    @Test(arguments: [Int64(0), nil])
    func anEmptyStreamedBodyArrivesEmpty(_ length: Int64?) async throws {
        var call = Call("request", method: .post)
        call.uploadBody = Self.stream([], length: length)
        #expect(try await echoed(call).body.isEmpty)
    }

    @Test func aBodyIsEchoed() async throws {
        var call = Call("echo", method: .post)
        call.uploadBody = .data(Data("Hello World".utf8))
        #expect(try await agent.response(call).string == "Hello World")
    }

    @Test func aMegabyteBodyIsEchoed() async throws {
        var call = Call("echo", method: .post)
        let body = Data(repeating: UInt8(ascii: "A"), count: 1_000_000)
        call.uploadBody = Self.stream([body], length: Int64(body.count))
        #expect(try await agent.response(call).data == body)
    }

    @Test(arguments: [("gzip", "gzip"), ("deflate", "deflate"), ("brotli", "br")])
    func anEncodedBodyArrivesDecoded(_ name: String, coding: String) async throws {
        let response = try await agent.response(Call(name))
        #expect(response.statusCode == 200)
        #expect(response.value(forHeader: "Content-Encoding") == coding, "the coding was asked for")
        #expect(response.string == "TEST\n")
    }

    @Test func anUnencodedBodyArrivesAsItIs() async throws {
        let response = try await agent.response(Call("identity"))
        #expect([nil, "identity"].contains(response.value(forHeader: "Content-Encoding")))
        #expect(response.string == "TEST\n")
    }

    // MARK: Header fields and the URL

    @Test func aCustomFieldIsSentAsSpelled() async throws {
        var call = Call("request", method: .post)
        call.headers = ["X-Foo": "BARbaz"]
        call.uploadBody = .data(Data("Hello World".utf8))
        #expect(try await echoed(call).headers["X-Foo"] == ["BARbaz"])
    }

    @Test func aFieldWithAnEmptyValueIsSent() async throws {
        var call = Call("request", method: .post)
        call.headers = ["X-Test": ""]
        #expect(try await echoed(call).headers["X-Test"] == [""])
    }

    @Test func aFieldTheServerRepeatsKeepsEveryValue() async throws {
        let response = try await agent.response(Call("header_multivalue"))
        let values = response.value(forHeader: "X-Test")?.split(separator: ",").map { $0.trimmed }
        #expect(values == ["one", "two"])
    }

    @Test func aFieldWithTwoValuesSendsBoth() async throws {
        var call = Call("request")
        call.headers = ["X-Test": "one, two"]
        #expect(try await echoed(call).values(of: "X-Test") == ["one", "two"])
    }

    @Test func repeatedQueryItemsArriveInOrder() async throws {
        let call = Call("request?foo=bar&bar=baz&baz=qux&qux=&foo=phew")
        let params = try await echoed(call).params
        #expect(params == ["foo": ["bar", "phew"], "bar": ["baz"], "baz": ["qux"], "qux": [""]])
    }

    @Test func aGetAndAPostAreEchoed() async throws {
        let get = try await echoed(Call("request"))
        #expect(get.method == "GET" && get.body.isEmpty)
        var post = Call("request", method: .post)
        post.uploadBody = .data(Data("Hello World".utf8))
        let posted = try await echoed(post)
        #expect(posted.method == "POST" && posted.body == "Hello World")
    }

    @Test func aHeadWithAContentLengthReadsNoBody() async throws {
        let response = try await agent.response(Call("head_with_cl", method: .head))
        #expect(response.statusCode == 200)
        #expect(response.data.isEmpty)
        #expect(response.trailers.isEmpty)
    }

    // MARK: Statuses and redirects

    @Test(arguments: ["301", "308"])
    func aRedirectIsFollowedAsAGet(_ name: String) async throws {
        let request = try await echoed(Call(name))
        #expect(request.method == "GET" && request.body.isEmpty)
    }

    @Test func endlessRedirectsFail() async {
        #expect(await failure(of: Call("redirect_ping")) != nil)
    }

    @Test(arguments: [("404", 404), ("999", 999)])
    func anyThreeDigitStatusIsAResponse(_ name: String, status: Int) async throws {
        let response = try await agent.response(Call(name))
        #expect(response.statusCode == status)
        #expect(response.data.isEmpty)
    }

    @Test func aHundredConcurrentRequestsAllSucceed() async throws {
        let bodies = try await withThrowingTaskGroup(of: Data.self) { group in
            for _ in 0..<100 { group.addTask { try await agent.response(Call("request")).data } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(bodies.count == 100)
        #expect(bodies.allSatisfy { !$0.isEmpty })
    }

    // MARK: Cookies and revalidation

    @Test func aCookieTheServerSetIsSentBack() async throws {
        let set = try await agent.response(Call("cookie"))
        let cookie = try #require(set.value(forHeader: "Set-Cookie"))
        #expect(cookie.hasPrefix("foo="))
        let sent = try await echoed(Call("request")).headers["Cookie"]
        #expect(sent == [cookie])
    }

    @Test func anETagIsRevalidatedAndTheNotModifiedFieldsMerged() async throws {
        var call = Call("etag")
        call.followsHTTPCaching = true
        for counter in 0..<3 {
            for attempt in 0..<2 {
                let response = try await agent.response(call)
                #expect(response.statusCode == 200)
                #expect(response.value(forHeader: "ETag") == String(counter))
                #expect(response.value(forHeader: "Cached") == (attempt == 0 ? "false" : "true"))
                #expect(response.isRevalidated == (attempt == 1))
                #expect(response.string == String(counter))
            }
        }
    }

    // MARK: Streams, cancellation, trailers

    @Test func cancellingBeforeTheHeadEndsTheRequest() async throws {
        let waiting = Task { try await agent.stream(Call("stall")) }
        try await eventually { !server.receivedRequests(path: "/conformance/stall").isEmpty }
        waiting.cancel()
        await #expect(throws: ErrandError.cancelled) { _ = try await waiting.value }
    }

    @Test func cancellingBeforeTheBodyEndsItsReading() async throws {
        let stream = try await agent.stream(Call("stall_body"))
        #expect(stream.response.statusCode == 200)
        let (arrivals, arrived) = AsyncStream<Void>.makeStream()
        let reading = Task {
            for try await _ in stream { arrived.yield() }
        }
        var waiting = arrivals.makeAsyncIterator()
        _ = await waiting.next()
        reading.cancel()
        await #expect(throws: ErrandError.cancelled) { _ = try await reading.value }
    }

    @Test func readingOneByteOfAMegabyteAndLeaving() async throws {
        let stream = try await agent.stream(Call("1mb_body"))
        var first: UInt8?
        for try await chunk in stream {
            first = chunk.first
            break
        }
        #expect(first == UInt8(ascii: "A"))
    }

    @Test func readingAMegabyteChunkByChunk() async throws {
        let stream = try await agent.stream(Call("1mb_body"))
        var body = Data()
        for try await chunk in stream { body.append(chunk) }
        #expect(body == Data(repeating: UInt8(ascii: "A"), count: 1_000_000))
    }

    @Test func eachByteSentIsEchoedBeforeTheNextIsSent() async throws {
        let (echoes, echoed) = AsyncStream<Void>.makeStream()
        var call = Call("echo", method: .post)
        call.uploadBody = .stream(
            AsyncStream { continuation in
                Task {
                    var waiting = echoes.makeAsyncIterator()
                    for _ in 0..<1000 {
                        continuation.yield(Data("A".utf8))
                        guard await waiting.next() != nil else { break }
                    }
                    continuation.finish()
                }
            }, length: nil)
        let stream = try await agent.stream(call)
        var chunks = 0
        for try await chunk in stream {
            #expect(chunk == Data("A".utf8))
            chunks += 1
            echoed.yield()
        }
        echoed.finish()
        #expect(chunks == 1000)
    }

    /// The server ends its response while the request body is still open: the stream ends
    /// there, and only then does its consumer end the request body it feeds.
    @Test func aResponseThatEndsBeforeItsRequestBodyEndsTheStream() async throws {
        let (heard, hear) = AsyncStream<Void>.makeStream()
        let ended = Locked<AsyncStream<Data>.Continuation.Termination?>(nil)
        var call = Call("speak", method: .post)
        call.uploadBody = .stream(
            AsyncStream { continuation in
                continuation.onTermination = { termination in ended[\.self] = termination }
                Task {
                    for await _ in heard { continuation.yield(Data("A".utf8)) }
                    continuation.finish()
                }
            }, length: nil)
        let stream = try await agent.stream(call)
        var chunks = 0
        for try await chunk in stream {
            #expect(chunk == Data("A".utf8))
            chunks += 1
            hear.yield()
        }
        hear.finish()
        #expect(chunks == 1000)
        #expect(stream.task.error == nil)
        try await eventually { ended[\.self] != nil }
    }

    @Test func trailersAreReadAfterTheBody() async throws {
        let response = try await agent.response(Call("trailers"))
        #expect(response.string == "Response body")
        #expect(response.value(forTrailer: "x-trailer-one") == "first-value")
        #expect(response.value(forTrailer: "X-Trailer-Two") == "second-value")
        #expect(response.value(forTrailer: "X-Checksum") == "abc123")
        #expect(response.trailers.count == 3)
    }

    @Test(arguments: [nil, Int64(11)])
    func trailersAreSentAfterAStreamedBody(_ length: Int64?) async throws {
        var call = Call("request", method: .post)
        call.uploadBody = .stream(
            AsyncStream { continuation in
                continuation.yield(Data("Hello World".utf8))
                continuation.finish()
            }, length: length
        ) {
            ["X-Request-Trailer-One": "first-trailer-value", "X-Request-Trailer-Two": "second-trailer-value"]
        }
        let request = try await echoed(call)
        #expect(request.body == "Hello World")
        #expect(request.trailers["X-Request-Trailer-One"] == ["first-trailer-value"])
        #expect(request.trailers["X-Request-Trailer-Two"] == ["second-trailer-value"])
    }

    @Test(arguments: [
        ["Content-Length": "5"], ["Authorization": "Bearer secret"], ["X-Bad": "a\r\nX-Injected: 1"], ["Bad Name": "v"],
    ])
    func aTrailerFieldThatCannotBeSentFailsTheRequestNamingIt(_ trailers: [String: String]) async throws {
        var call = Call("request", method: .post)
        call.uploadBody = .stream(
            AsyncStream { continuation in
                continuation.yield(Data("Hello".utf8))
                continuation.finish()
            }, length: nil, trailers: { trailers })
        let error = await failure(of: call)
        guard case .serialization(let reason) = error else {
            Issue.record("sent with \(trailers): \(String(describing: error))")
            return
        }
        #expect(reason.contains("trailer"), "\(reason)")
        #expect(!reason.contains("secret") && !reason.contains("Injected"), "\(reason)")
    }

    /// libcurl builds a body's trailer lines in a buffer of 64 KiB and, past it, failed the request
    /// with "Out of memory" (`URLError` -1) after sending the body: one field too long, or many.
    /// `fields` fields of `size`-byte values: one of 65,526 makes 65,536 bytes of lines, 2,000 of
    /// 30 about 88,000.
    @Test(arguments: [(fields: 1, size: 65_526), (fields: 2000, size: 30)])
    func trailerFieldsPastWhatLibcurlSendsFailTheRequestSayingSo(fields: Int, size: Int) async throws {
        let trailers = Dictionary(
            uniqueKeysWithValues: (0..<fields).map { ("X-F\($0)", String(repeating: "v", count: size)) })
        var call = Call("request", method: .post)
        call.uploadBody = .stream(
            AsyncStream { continuation in
                continuation.yield(Data("Hello".utf8))
                continuation.finish()
            }, length: nil, trailers: { trailers })
        let error = await failure(of: call)
        guard case .serialization(let reason) = error else {
            Issue.record("\(fields) trailer field(s) of \(size) bytes ended with \(String(describing: error))")
            return
        }
        #expect(reason.contains("trailer fields") && reason.contains("64 KiB"), "\(reason)")
    }

    @Test func aStreamsTrailersAreReadOnceItsBodyEnded() async throws {
        let stream = try await agent.stream(Call("trailers"))
        #expect(try await stream.collect(upTo: 1 << 10) == Data("Response body".utf8))
        #expect(stream.value(forTrailer: "X-Checksum") == "abc123")
        #expect(stream.trailers.count == 3)
    }

    /// The trailers showed as soon as the transfer ended, while the body still waited unread.
    @Test func aStreamsTrailersShowOnlyOnceItsReaderReachedTheEnd() async throws {
        let stream = try await agent.stream(Call("trailers"))
        try await eventually { stream.task.response != nil }
        #expect(stream.trailers.isEmpty, "before any of the body was read")
        var chunks = stream.makeAsyncIterator()
        #expect(try await chunks.next() == Data("Response body".utf8))
        #expect(stream.trailers.isEmpty, "before iteration returned nil")
        #expect(try await chunks.next() == nil)
        #expect(stream.value(forTrailer: "X-Checksum") == "abc123")
    }
}
