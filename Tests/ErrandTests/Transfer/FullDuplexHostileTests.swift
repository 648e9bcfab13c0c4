import Foundation
import Testing

@testable import Errand

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A response that ends while its streamed request body is still open, framed as a hostile
/// server frames it: the response ends where its framing says, or fails clearly, and the body's
/// producer is always stopped.
@Suite("Full duplex: hostile framing")
final class FullDuplexHostileTests {
    /// Answers each connection: reads the request's head, writes `answer`, then keeps the
    /// connection open (reading what comes) until the client closes it, or closes at once.
    final class OneShotServer: Sendable {
        let port: UInt16
        private let descriptor: Int32

        init(answer: Data, closesAfterAnswer: Bool = false) throws {
            let (descriptor, port) = try SilentListener.listeningSocket(backlog: 4)
            self.descriptor = descriptor
            self.port = port
            Thread.detachNewThread {
                while true {
                    let connection = accept(descriptor, nil, nil)
                    guard connection >= 0 else { return }
                    Thread.detachNewThread {
                        Self.serve(connection, answer: answer, closesAfterAnswer: closesAfterAnswer)
                    }
                }
            }
        }

        /// Answers a redirected request's target with `200` and `there`, anything else with `answer`.
        private static func serve(_ connection: Int32, answer: Data, closesAfterAnswer: Bool) {
            defer { close(connection) }
            var received = Data()
            var buffer = [UInt8](repeating: 0, count: 4096)
            while received.range(of: Data("\r\n\r\n".utf8)) == nil {
                let count = recv(connection, &buffer, buffer.count, 0)
                guard count > 0 else { return }
                received.append(contentsOf: buffer[0..<count])
            }
            let redirected = received.starts(with: Data("GET /elsewhere ".utf8))
            let answer = redirected ? Data("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nthere".utf8) : answer
            _ = answer.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            // An orderly close: the answer ends with a FIN, and what the client still sends is
            // read, so no reset can overtake the answer.
            if closesAfterAnswer { shutdown(connection, Int32(SHUT_WR)) }
            while recv(connection, &buffer, buffer.count, 0) > 0 {}
        }

        deinit {
            shutdown(descriptor, Int32(SHUT_RDWR))
            close(descriptor)
        }
    }

    struct Post: BaseRequest {
        let baseUrl: String
        let body: AsyncStream<Data>
        var url: String { "/duplex" }
        var method: HTTPMethod { .post }
        var uploadBody: UploadBody? { .stream(body, length: nil) }
        var responseSerializerType: ResponseSerializerType { .data }
        var timeoutInterval: TimeInterval { 20 }
        func statusCodeValidator(_ code: Int) -> Bool { true }
    }

    /// A body whose producer sends one piece, then waits to be stopped; `ended` hears how.
    private static func endlessBody(_ ended: Locked<AsyncStream<Data>.Continuation.Termination?>) -> AsyncStream<Data> {
        AsyncStream { continuation in
            continuation.onTermination = { termination in ended[\.self] = termination }
            continuation.yield(Data("request".utf8))
        }
    }

    private let agent: NetworkAgent = {
        let config = NetworkConfig()
        config.callbackQueue = DispatchQueue(label: "errand.full-duplex-hostile-tests.callbacks")
        config.cacheDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("errand-duplex-\(UUID())")
        return NetworkAgent(config: config)
    }()

    /// The outcome of posting an endless body to a server answering `answer`, and how the body ended.
    private func post(
        _ answer: String, closesAfterAnswer: Bool = false
    ) async throws -> (Result<Response, ErrandError>, AsyncStream<Data>.Continuation.Termination?) {
        let server = try OneShotServer(answer: Data(answer.utf8), closesAfterAnswer: closesAfterAnswer)
        let ended = Locked<AsyncStream<Data>.Continuation.Termination?>(nil)
        let task = agent.start(Post(baseUrl: "http://127.0.0.1:\(server.port)", body: Self.endlessBody(ended)))
        let result: Result<Response, ErrandError>
        do {
            result = .success(try await task.value)
        } catch {
            result = .failure(error)
        }
        try await eventually { ended[\.self] != nil }
        return (result, ended[\.self])
    }

    @Test func aLengthThenMoreBytesEndsAtTheLength() async throws {
        let (result, ended) = try await post("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloHTTP/1.1 200 OK\r\n\r\n")
        let response = try result.get()
        #expect(response.data == Data("hello".utf8))
        #expect(ended != nil)
    }

    @Test func trailersOfAChunkedBodyArriveOnce() async throws {
        let (result, _) = try await post(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nX-Trailer: one\r\n\r\n")
        let response = try result.get()
        #expect(response.data == Data("hello".utf8))
        #expect(response.trailers == ["X-Trailer": "one"])
    }

    @Test func aMalformedChunkFailsAsABadServerResponse() async throws {
        let (result, ended) = try await post("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n")
        guard case .failure(.transport(let failure)) = result else {
            Issue.record("a malformed chunked body ended with \(result)")
            return
        }
        #expect(failure.code == .badServerResponse)
        #expect(ended != nil)
    }

    @Test func aNoContentWhileTheBodyStreamsEndsTheResponse() async throws {
        let (result, ended) = try await post("HTTP/1.1 204 No Content\r\n\r\n")
        #expect(try result.get().statusCode == 204)
        #expect(ended != nil)
    }

    /// A chunked body larger than the transport holds for a consumer that is behind: libcurl is
    /// paused and hands the same raw bytes over again, which are decoded once.
    @Test func aSlowConsumerGetsEveryDecodedByteOnceInOrder() async throws {
        let content = Data((0..<(4 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 11) })
        var answer = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        var chunks = Data()
        for start in stride(from: 0, to: content.count, by: 999) {
            let piece = content[start..<min(start + 999, content.count)]
            chunks += Data((String(piece.count, radix: 16) + ";ext=1\r\n").utf8) + piece + Data("\r\n".utf8)
        }
        chunks += Data("0\r\n\r\n".utf8)
        let server = try OneShotServer(answer: Data(answer.utf8) + chunks)
        answer = ""
        let ended = Locked<AsyncStream<Data>.Continuation.Termination?>(nil)
        let stream = try await agent.stream(
            Post(baseUrl: "http://127.0.0.1:\(server.port)", body: Self.endlessBody(ended)))
        var received = Data()
        for try await piece in stream {
            received += piece
            // A consumer that keeps the transport waiting now and then.
            if received.count % 7 == 0 { try await Task.sleep(for: .milliseconds(1)) }
        }
        #expect(received.count == content.count)
        #expect(received == content)
        try await eventually { ended[\.self] != nil }
    }

    /// A redirect that makes the request a GET drops the body and follows; one that needs the
    /// body again fails, the body sent only once.
    @Test(arguments: [301, 302, 303, 307])
    func aRedirectWhileTheBodyStreamsEnds(status: Int) async throws {
        let (result, ended) = try await post(
            "HTTP/1.1 \(status) Moved\r\nLocation: /elsewhere\r\nContent-Length: 0\r\n\r\n")
        if status == 307 {
            guard case .failure = result else {
                Issue.record("a 307 of a streamed body ended with \(result)")
                return
            }
        } else {
            #expect(try result.get().data == Data("there".utf8))
        }
        #expect(ended != nil)
    }
}
