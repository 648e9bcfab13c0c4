import ErrandScenarios
import ErrandTestServer
import Foundation
import Testing

/// `/sse/…`, `/stream/{n}`, `/lines` and `/v1/chat/completions`, read as raw bytes so that the
/// chunked framing itself is checked: one chunk per event, the last chunk or its absence, and what
/// arrives before the body is over. Each test has a server of its own.
@Suite("TestServer stream endpoints")
struct TestServerStreamEndpointsTests {
    // MARK: /sse/events

    @Test func eventsGoOutOneChunkEachAndEndWithTheLastChunk() async throws {
        let server = try TestServer()
        let response = try await RawHTTP.get(server, "/sse/events?count=2&retry=1500")
        #expect(response.status == 200)
        #expect(response.headers["content-type"] == "text/event-stream")
        #expect(response.headers["cache-control"] == "no-cache")
        #expect(response.headers["transfer-encoding"] == "chunked")
        #expect(response.headers["content-length"] == nil)
        let expected = chunk("retry: 1500\n\n") + chunk(event(1)) + chunk(event(2)) + "0\r\n\r\n"
        #expect(String(decoding: response.body, as: UTF8.self) == expected)
    }

    @Test func aCompleteStreamKeepsTheConnectionForTheNextRequest() async throws {
        let server = try TestServer()
        let wire =
            "GET /sse/events?count=1&event=update HTTP/1.1\r\nHost: x\r\n\r\n"
            + "GET /range/3 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        let everything = try await RawHTTP.exchange(port: server.port, Data(wire.utf8), wholeStream: true)
        let text = String(decoding: everything.body, as: UTF8.self)
        #expect(text.hasPrefix(chunk(event(1, name: "update")) + "0\r\n\r\nHTTP/1.1 200 OK\r\n"))
        #expect(text.hasSuffix("\r\n\r\nabc"))
    }

    @Test func dropCutsTheConnectionWithoutTheLastChunk() async throws {
        let server = try TestServer()
        // Asked to keep the connection, the server closes it anyway, and never answers the second request.
        let wire =
            "GET /sse/events?count=2&drop=1 HTTP/1.1\r\nHost: x\r\n\r\n"
            + "GET /range/3 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        let dropped = try await RawHTTP.exchange(port: server.port, Data(wire.utf8), wholeStream: true)
        #expect(dropped.status == 200)
        #expect(dropped.headers["transfer-encoding"] == "chunked")
        #expect(String(decoding: dropped.body, as: UTF8.self) == chunk(event(1)) + chunk(event(2)))
        let framing = try #require(decodeChunks(dropped.body))
        #expect(!framing.terminated)
    }

    @Test func lastEventIDContinuesTheCountAndIsRecorded() async throws {
        let server = try TestServer()
        let first = try await RawHTTP.get(server, "/sse/events?count=2&drop=1")
        #expect(String(decoding: first.body, as: UTF8.self) == chunk(event(1)) + chunk(event(2)))

        let resumed = try await RawHTTP.get(server, "/sse/events?count=2", headers: ["Last-Event-ID: 2"])
        #expect(String(decoding: resumed.body, as: UTF8.self) == chunk(event(3)) + chunk(event(4)) + "0\r\n\r\n")

        // An id that is not a number starts the count again.
        let garbled = try await RawHTTP.get(server, "/sse/events?count=1", headers: ["Last-Event-ID: abc"])
        #expect(String(decoding: garbled.body, as: UTF8.self) == chunk(event(1)) + "0\r\n\r\n")

        #expect(server.lastEventIDs() == [nil, "2", "abc"])
        #expect(server.lastEventIDs(path: "/sse/events") == [nil, "2", "abc"])
        #expect(server.receivedRequests(path: "/sse/events")[1].header("last-event-id") == "2")
    }

    @Test func eachEventIsSentWithoutWaitingForTheNext() async throws {
        let server = try TestServer()
        // A minute between events: the first can only arrive if it was flushed on its own.
        let received = try await RawHTTP.receive(
            server, "GET /sse/events?count=2&interval=60000 HTTP/1.1\r\nHost: x\r\n\r\n",
            until: { $0.range(of: Data(chunk(event(1)).utf8)) != nil })
        let text = String(decoding: received, as: UTF8.self)
        #expect(text.hasSuffix("\r\n\r\n" + chunk(event(1))))
        #expect(!text.contains("id: 2"))
        server.stop()
    }

    @Test func eventNameAndContentTypeCanBeChosen() async throws {
        let server = try TestServer()
        let response = try await RawHTTP.get(server, "/sse/events?count=1&event=ping&content_type=text/plain")
        #expect(response.headers["content-type"] == "text/plain")
        #expect(String(decoding: response.body, as: UTF8.self) == chunk(event(1, name: "ping")) + "0\r\n\r\n")
    }

    @Test func timestampPutsTheMonotonicClockAtSendingIntoEachEvent() async throws {
        let server = try TestServer()
        let before = TestServer.monotonicNanoseconds()
        let response = try await RawHTTP.get(server, "/sse/events?count=3&interval=2&timestamp=1")
        let after = TestServer.monotonicNanoseconds()
        let framing = try #require(decodeChunks(response.body))
        #expect(framing.terminated)
        let stamps = framing.chunks.enumerated().compactMap { index, chunk -> UInt64? in
            let text = String(decoding: chunk, as: UTF8.self)
            let prefix = "id: \(index + 1)\nevent: tick\ndata: {\"n\":\(index + 1),\"t\":"
            guard text.hasPrefix(prefix), text.hasSuffix("}\n\n") else { return nil }
            return UInt64(text.dropFirst(prefix.count).dropLast(3))
        }
        #expect(stamps.count == 3)
        // The same clock as the client's, read as each event left: in order, within the request.
        #expect(stamps == stamps.sorted())
        #expect(stamps.allSatisfy { (before...after).contains($0) })
    }

    @Test func statusAsksFor204OrAnError() async throws {
        let server = try TestServer()
        let empty = try await RawHTTP.get(server, "/sse/events?status=204")
        #expect(empty.status == 204)
        #expect(empty.body.isEmpty)
        #expect(empty.headers["transfer-encoding"] == nil)
        #expect(empty.headers["content-length"] == nil)

        let failed = try await RawHTTP.get(server, "/sse/events?status=500")
        #expect(failed.status == 500)
        #expect(failed.headers["content-type"] == "text/plain; charset=utf-8")
        #expect(String(decoding: failed.body, as: UTF8.self) == "/sse/events answers 500 as asked\n")

        for query in ["status=700", "count=-1", "interval=soon", "retry=x", "event=a%0Ab", "content_type=a%0Db"] {
            #expect(try await RawHTTP.get(server, "/sse/events?" + query).status == 400, "\(query)")
        }
    }

    @Test func anHTTP10ClientGetsTheBodyUnframedAndAHeadRequestNoBody() async throws {
        let server = try TestServer()
        let old = try await RawHTTP.exchange(
            port: server.port, Data("GET /sse/events?count=1 HTTP/1.0\r\nHost: x\r\n\r\n".utf8))
        #expect(old.headers["transfer-encoding"] == nil)
        #expect(old.headers["connection"] == "close")
        #expect(String(decoding: old.body, as: UTF8.self) == event(1))

        let head = try await RawHTTP.request(server, "HEAD", "/sse/events?count=1")
        #expect(head.status == 200)
        #expect(head.headers["transfer-encoding"] == "chunked")
        #expect(head.body.isEmpty)
    }

    // MARK: /sse/endless and /sse/long-line

    @Test func endlessStopsAtExactlySizeBytesIn64KiBChunks() async throws {
        let server = try TestServer()
        let size = 300_000
        let response = try await RawHTTP.get(server, "/sse/endless?size=\(size)")
        #expect(response.headers["content-type"] == "text/event-stream")
        let framing = try #require(decodeChunks(response.body))
        #expect(framing.terminated)
        #expect(framing.chunks.map(\.count) == [65_536, 65_536, 65_536, 65_536, 37_856])
        #expect(Data(framing.chunks.joined()) == endlessEvents(bytes: size))
        #expect(try await RawHTTP.get(server, "/sse/endless?size=-1").status == 400)
    }

    @Test func endlessGoesOnUntilTheClientHangsUp() async throws {
        let server = try TestServer()
        let wanted = 3 << 20
        let received = try await RawHTTP.receive(
            server, "GET /sse/endless HTTP/1.1\r\nHost: x\r\n\r\n", until: { $0.count >= wanted })
        let headEnd = try #require(received.range(of: Data("\r\n\r\n".utf8)))
        let body = received[headEnd.upperBound...]
        let first = Data("10000\r\n".utf8) + endlessEvents(bytes: 65_536) + Data("\r\n10000\r\n".utf8)
        #expect(body.prefix(first.count) == first)
        // Still answering after the client left mid-stream.
        #expect(try await RawHTTP.get(server, "/range/3").body == Data("abc".utf8))
    }

    @Test func longLineIsOneDataLineIn64KiBPieces() async throws {
        let server = try TestServer()
        let response = try await RawHTTP.get(server, "/sse/long-line?bytes=140000")
        let framing = try #require(decodeChunks(response.body))
        #expect(framing.terminated)
        #expect(framing.chunks.map(\.count) == [6, 65_536, 65_536, 8_928, 2])
        let expected = Data("data: ".utf8) + Data(repeating: UInt8(ascii: "x"), count: 140_000) + Data("\n\n".utf8)
        #expect(Data(framing.chunks.joined()) == expected)
    }

    // MARK: /stream/{n}

    @Test func streamSendsHttpbinsJSONLinesOneChunkEach() async throws {
        let server = try TestServer()
        let response = try await RawHTTP.get(server, "/stream/3?a=1", headers: ["X-Test: yes"])
        #expect(response.headers["content-type"] == "application/json")
        let framing = try #require(decodeChunks(response.body))
        #expect(framing.terminated)
        #expect(framing.chunks.count == 3)
        for (id, line) in framing.chunks.enumerated() {
            #expect(line.last == 0x0A)
            #expect(line.dropLast().contains(0x0A) == false)
            let item = try #require(try JSONSerialization.jsonObject(with: line) as? [String: Any])
            #expect(item["id"] as? Int == id)
            #expect(item["url"] as? String == "http://127.0.0.1/stream/3?a=1")
            #expect(item["args"] as? [String: String] == ["a": "1"])
            #expect(item["origin"] as? String == "127.0.0.1")
            #expect((item["headers"] as? [String: String])?["X-Test"] == "yes")
        }

        let capped = try #require(decodeChunks(try await RawHTTP.get(server, "/stream/150").body))
        #expect(capped.chunks.count == 100)
        let none = try #require(decodeChunks(try await RawHTTP.get(server, "/stream/0").body))
        #expect(none.chunks.isEmpty && none.terminated)
        #expect(try await RawHTTP.get(server, "/stream/x").status == 404)
    }

    // MARK: /lines

    @Test func linesArriveInPiecesThatStraddleLineEnds() async throws {
        let server = try TestServer()
        let response = try await RawHTTP.get(server, "/lines?count=4&bytes=20&line_end=crlf")
        #expect(response.headers["content-type"] == "application/x-ndjson")
        let framing = try #require(decodeChunks(response.body))
        #expect(framing.terminated)
        #expect(framing.chunks.map(\.count) == Array(repeating: 7, count: 12) + [4])
        let lines = (1...4).map { TestServer.linesContent(line: $0, bytes: 20) ?? "" }
        #expect(String(decoding: Data(framing.chunks.joined()), as: UTF8.self) == lines.map { $0 + "\r\n" }.joined())
        // Bytes 14..<21 end with line 1's CR; its LF comes in the next chunk.
        #expect(framing.chunks[2].last == UInt8(ascii: "\r"))
        #expect(framing.chunks[3].first == UInt8(ascii: "\n"))
    }

    @Test func linesDefaultToLFAndRefuseWhatCannotBeSent() async throws {
        let server = try TestServer()
        #expect(TestServer.linesContent(line: 3, bytes: 20) == #"{"n":3,"pad":"xxxx"}"#)
        #expect(TestServer.linesContent(line: 3, bytes: 15) == nil)

        let response = try await RawHTTP.get(server, "/lines?count=2&bytes=16&piece=5")
        let framing = try #require(decodeChunks(response.body))
        #expect(framing.chunks.map(\.count) == [5, 5, 5, 5, 5, 5, 4])
        #expect(
            String(decoding: Data(framing.chunks.joined()), as: UTF8.self) == #"{"n":1,"pad":""}"# + "\n"
                + #"{"n":2,"pad":""}"# + "\n")

        for query in ["bytes=5", "line_end=cr", "piece=0", "count=x"] {
            #expect(try await RawHTTP.get(server, "/lines?" + query).status == 400, "\(query)")
        }
    }

    // MARK: /v1/chat/completions

    @Test func aStreamedChatCompletionSendsOneChunkPerToken() async throws {
        let server = try TestServer()
        let response = try await RawHTTP.chat(
            server, #"{"model": "errand-1", "messages": [{"role": "user", "content": "Hi there"}], "stream": true}"#)
        #expect(response.status == 200)
        #expect(response.headers["content-type"] == "text/event-stream")
        let framing = try #require(decodeChunks(response.body))
        #expect(framing.terminated)
        let created = try #require(try Self.created(in: framing.chunks.first ?? Data()))

        let tokens = [
            "You", " said:", " Hi", " there.", " This", " reply", " streams", " one", " token", " at", " a", " time.",
        ]
        let prefix = #"data: {"id":"chatcmpl-errand-1","object":"chat.completion.chunk","created":\#(created),"#
        func chunk(_ choice: String) -> String {
            prefix + #""model":"errand-1","choices":[\#(choice)]}"# + "\n\n"
        }
        let expected =
            [chunk(#"{"index":0,"delta":{"role":"assistant"},"finish_reason":null}"#)]
            + tokens.map { chunk(#"{"index":0,"delta":{"content":"\#($0)"},"finish_reason":null}"#) }
            + [chunk(#"{"index":0,"delta":{},"finish_reason":"stop"}"#), "data: [DONE]\n\n"]
        #expect(framing.chunks.map { String(decoding: $0, as: UTF8.self) } == expected)
    }

    @Test func streamOptionsAddAUsageChunkAndTextIsEscaped() async throws {
        let server = try TestServer()
        let body = #"""
            {"model": "m\"1", "stream": true, "stream_options": {"include_usage": true},
             "messages": [{"role": "system", "content": "be brief"},
                          {"role": "user", "content": [{"type": "text", "text": "say \"hi\"\nnow"}]}]}
            """#
        let framing = try #require(decodeChunks(try await RawHTTP.chat(server, body).body))
        let chunks = framing.chunks.map { String(decoding: $0, as: UTF8.self) }
        // The role, 13 tokens (You, said:, say, "hi", \nnow., This, reply, streams, one, token, at, a,
        // time.), the stop, the usage and [DONE].
        #expect(chunks.count == 17)
        #expect(chunks[1].contains(#""model":"m\"1""#))
        #expect(chunks[3].contains(#""delta":{"content":" say"}"#))
        #expect(chunks[4].contains(#""delta":{"content":" \"hi\""}"#))
        #expect(chunks[5].contains(#""delta":{"content":"\nnow."}"#))
        #expect(chunks[14].contains(#""delta":{},"finish_reason":"stop""#))
        let usage = #""choices":[],"usage":{"prompt_tokens":5,"completion_tokens":13,"total_tokens":18}}"#
        #expect(chunks[15].hasSuffix(usage + "\n\n"))
        #expect(chunks[16] == "data: [DONE]\n\n")
    }

    @Test func eachTokenIsSentWithoutWaitingForTheNext() async throws {
        let server = try TestServer()
        let body = #"{"model": "m", "messages": [{"role": "user", "content": "x"}], "stream": true}"#
        let request =
            "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-Errand-Token-Delay-Ms: 60000\r\n"
            + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body
        let received = try await RawHTTP.receive(
            server, request, until: { String(decoding: $0, as: UTF8.self).contains(#""role":"assistant""#) })
        let text = String(decoding: received, as: UTF8.self)
        #expect(text.hasSuffix("\n\n\r\n"))
        #expect(!text.contains(#""content""#))
        server.stop()
    }

    @Test func aChatCompletionWithoutStreamIsOneJSONDocument() async throws {
        let server = try TestServer()
        let request = #"{"model": "errand-1", "messages": [{"role": "user", "content": "Hello"}]}"#
        for number in 1...2 {
            let response = try await RawHTTP.chat(server, request)
            #expect(response.status == 200)
            #expect(response.headers["content-type"] == "application/json")
            let completion = try response.jsonObject()
            #expect(completion["id"] as? String == "chatcmpl-errand-\(number)")
            #expect(completion["object"] as? String == "chat.completion")
            #expect(completion["model"] as? String == "errand-1")
            #expect(completion["created"] is Int)
            let choice = try #require((completion["choices"] as? [[String: Any]])?.first)
            #expect(choice["finish_reason"] as? String == "stop")
            let message = try #require(choice["message"] as? [String: String])
            #expect(
                message == ["role": "assistant", "content": "You said: Hello. This reply streams one token at a time."])
            #expect(
                completion["usage"] as? [String: Int] == [
                    "prompt_tokens": 1, "completion_tokens": 11, "total_tokens": 12,
                ])
        }
    }

    @Test func aBadChatRequestGetsOpenAIsErrorShape() async throws {
        let server = try TestServer()
        for body in [
            "not json", "[]", #"{"messages": [{"role": "user", "content": "x"}]}"#, #"{"model": "m"}"#,
            #"{"model": "m", "messages": []}"#, #"{"model": "m", "messages": [{"role": "system", "content": "x"}]}"#,
        ] {
            let response = try await RawHTTP.chat(server, body)
            #expect(response.status == 400, "\(body)")
            let error = try #require(try response.jsonObject()["error"] as? [String: Any])
            #expect(error["type"] as? String == "invalid_request_error")
            #expect(error["message"] is String)
        }
        let valid = #"{"model": "m", "messages": [{"role": "user", "content": "x"}]}"#
        #expect(try await RawHTTP.chat(server, valid, headers: ["X-Errand-Token-Delay-Ms: 60001"]).status == 400)
        #expect(try await RawHTTP.get(server, "/v1/chat/completions").status == 405)
    }

    @Test func anAPIKeyLetsInOnlyItsBearer() async throws {
        let server = try TestServer()
        server.chatCompletionsAPIKey = "sk-errand"
        let body = #"{"model": "m", "messages": [{"role": "user", "content": "x"}]}"#
        let missing = try await RawHTTP.chat(server, body, headers: [])
        #expect(missing.status == 401)
        let wrong = try await RawHTTP.chat(server, body, headers: ["Authorization: Bearer sk-other"])
        #expect(wrong.status == 401)
        let error = try #require(try wrong.jsonObject()["error"] as? [String: Any])
        #expect(error["type"] as? String == "invalid_request_error")
        #expect(error["code"] as? String == "invalid_api_key")
        #expect(try await RawHTTP.chat(server, body, headers: ["Authorization: Bearer sk-errand"]).status == 200)

        server.chatCompletionsAPIKey = nil
        #expect(try await RawHTTP.chat(server, body, headers: []).status == 200)
    }

    // MARK: Helpers

    /// The `created` of a chat completion chunk `data: {…}\n\n`.
    private static func created(in chunk: Data) throws -> Int? {
        let text = String(decoding: chunk, as: UTF8.self)
        guard text.hasPrefix("data: ") else { return nil }
        let object = try JSONSerialization.jsonObject(with: Data(text.dropFirst(6).utf8)) as? [String: Any]
        return object?["created"] as? Int
    }
}

/// `text` as one chunk of a chunked body: its size in hex, CRLF, the bytes, CRLF.
private func chunk(_ text: String) -> String {
    String(text.utf8.count, radix: 16) + "\r\n" + text + "\r\n"
}

/// The event `/sse/events` sends for `id`.
private func event(_ id: Int, name: String = "tick") -> String {
    "id: \(id)\nevent: \(name)\ndata: {\"n\":\(id)}\n\n"
}

/// The first `bytes` bytes of what `/sse/endless` sends: `data: {"n":K}\n\n` for K = 1, 2, ….
private func endlessEvents(bytes: Int) -> Data {
    var data = Data()
    var number = 0
    while data.count < bytes {
        number += 1
        data.append(Data("data: {\"n\":\(number)}\n\n".utf8))
    }
    return data.prefix(bytes)
}

/// The chunks of a chunked body, read strictly: `nil` when the framing is broken anywhere;
/// `terminated` when the last, empty chunk ends the body and nothing follows it.
private func decodeChunks(_ body: Data) -> (chunks: [Data], terminated: Bool)? {
    let crlf = Data("\r\n".utf8)
    var chunks: [Data] = []
    var rest = body[...]
    while !rest.isEmpty {
        guard let lineEnd = rest.range(of: crlf),
            let size = Int(String(decoding: rest[..<lineEnd.lowerBound], as: UTF8.self), radix: 16)
        else {
            return nil
        }
        rest = rest[lineEnd.upperBound...]
        if size == 0 { return rest == crlf ? (chunks, true) : nil }
        guard rest.count >= size + 2, rest.dropFirst(size).prefix(2) == crlf else { return nil }
        chunks.append(Data(rest.prefix(size)))
        rest = rest.dropFirst(size + 2)
    }
    return (chunks, false)
}

extension RawHTTP {
    /// Sends `request` on a connection of its own and reads until `done` holds for everything that
    /// arrived (or the server closes, or 10 seconds pass without a byte); then hangs up.
    fileprivate static func receive(
        _ server: TestServer, _ request: String, until done: @escaping @Sendable (Data) -> Bool
    ) async throws -> Data {
        try await onOwnThread {
            let connection = try RawHTTP(port: server.port)
            try connection.send(Data(request.utf8))
            var received = Data()
            while !done(received), let piece = connection.receive() { received.append(piece) }
            return received
        }
    }

    /// A chat completion request with `body`; tokens come without delay unless `headers` set one.
    fileprivate static func chat(
        _ server: TestServer, _ body: String, headers: [String] = ["X-Errand-Token-Delay-Ms: 0"]
    ) async throws -> Response {
        try await request(
            server, "POST", "/v1/chat/completions", headers: headers + ["Content-Type: application/json"],
            body: Data(body.utf8))
    }
}

extension RawHTTP.Response {
    /// The body as a JSON object.
    fileprivate func jsonObject() throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
    }
}
