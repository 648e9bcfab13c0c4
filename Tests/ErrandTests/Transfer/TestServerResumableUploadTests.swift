import ErrandScenarios
import ErrandTestServer
import Foundation
import Testing

/// The server side of draft-ietf-httpbis-resumable-upload (`/resumable/…`), driven over raw
/// sockets so that what it puts on the wire — interim `104`s, resets, problem documents — is seen
/// exactly, and independently of the client.
@Suite("TestServer resumable uploads")
struct TestServerResumableUploadTests {
    /// `size` bytes that are not one byte repeated, so a misplaced range changes the checksum.
    static func payload(_ size: Int) -> Data {
        TestServer.downloadContent(size: size, version: 7, range: 0..<size)
    }

    // MARK: Upload creation

    @Test func creationAnnouncesTheUploadBeforeTheBodyAndEndsInTheTargetsAnswer() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let file = Self.payload(100_000)
        let responses = try await Wire.exchange(
            server, "POST", "/resumable/photo",
            headers: ["Upload-Complete: ?1", "Upload-Length: 100000", "Upload-Draft-Interop-Version: 8"], body: file)

        #expect(responses.map(\.status) == [104, 200])
        let interim = try #require(responses.first)
        let location = try #require(interim.headers["location"])
        #expect(location.hasPrefix("/resumable/uploads/"))
        #expect(location.dropFirst("/resumable/uploads/".count).count == 32)
        #expect(interim.headers["upload-limit"] == "max-size=1073741824")
        #expect(interim.headers["upload-draft-interop-version"] == "8")

        let final = try #require(responses.last)
        #expect(final.headers["upload-complete"] == "?1")
        let answer = try Wire.json(final)
        #expect(answer["name"] as? String == "photo")
        #expect(answer["method"] as? String == "POST")
        #expect(answer["size"] as? Int == 100_000)
        #expect(answer["checksum"] as? String == Checksum(file).hexDigits)
        let id = try #require(answer["uploadId"] as? String)
        #expect(location == "/resumable/uploads/\(id)")

        let summary = try #require(server.resumableUpload(named: "photo"))
        #expect(summary.id == id)
        #expect(summary.offset == 100_000 && summary.length == 100_000 && summary.isComplete)
        #expect(summary.checksum == Checksum(file).hexDigits)
        #expect(summary.bytesRead == 100_000)
        #expect(summary.creations == 1 && summary.appends == 0 && summary.conflicts == 0)

        let state = try await Wire.exchange(server, "HEAD", location)
        #expect(state.map(\.status) == [204])
        #expect(state.first?.headers["upload-offset"] == "100000")
        #expect(state.first?.headers["upload-complete"] == "?1")
        #expect(state.first?.headers["upload-length"] == "100000")
        #expect(state.first?.headers["upload-limit"] == "max-size=1073741824")
        #expect(state.first?.headers["cache-control"] == "no-store")
    }

    @Test func anIncompleteCreationIsCreatedAndAppendsComplete() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let file = Self.payload(3000)
        let created = try await Wire.exchange(
            server, "PUT", "/resumable/parts", headers: ["Upload-Complete: ?0"], body: file.prefix(1000))
        #expect(created.map(\.status) == [104, 201])
        let location = try #require(created.last?.headers["location"])
        #expect(created.first?.headers["location"] == location)
        #expect(created.last?.headers["upload-complete"] == "?0")
        #expect(created.last?.headers["upload-offset"] == "1000")
        #expect(created.last?.headers["upload-limit"] == "max-size=1073741824")

        let middle = try await Wire.exchange(
            server, "PATCH", location, headers: Wire.append(at: 1000, complete: false), body: file[1000..<2000])
        #expect(middle.map(\.status) == [204])
        #expect(middle.first?.headers["upload-offset"] == "2000")
        #expect(middle.first?.headers["upload-complete"] == "?0")

        let last = try await Wire.exchange(
            server, "PATCH", location, headers: Wire.append(at: 2000, complete: true), body: file[2000...])
        #expect(last.map(\.status) == [200])
        #expect(last.first?.headers["upload-complete"] == "?1")
        let answer = try Wire.json(try #require(last.first))
        #expect(answer["method"] as? String == "PUT")
        #expect(answer["size"] as? Int == 3000)
        #expect(answer["checksum"] as? String == Checksum(file).hexDigits)
        #expect(server.resumableUpload(named: "parts")?.appends == 2)
    }

    @Test func theAnnouncementComesBeforeTheContinueAndNeverToHTTP10() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let file = Self.payload(1000)
        let head = Wire.head(
            "POST", "/resumable/careful", headers: ["Upload-Complete: ?1", "Expect: 100-continue"], contentLength: 1000)
        let responses = try await onOwnThread {
            let connection = try RawHTTP(port: server.port)
            try connection.send(head)
            var received = Data()
            // The body is sent only once both interim heads are in, as a client waiting for 100 would.
            while received.ranges(of: Data("\r\n\r\n".utf8)).count < 2, let piece = connection.receive() {
                received.append(piece)
            }
            try connection.send(file)
            return Wire.responses(in: received + Wire.readAll(from: connection))
        }
        // The draft: a 104 never replaces the 100 a client asked for.
        #expect(responses.map(\.status) == [104, 100, 200])
        #expect(try Wire.json(try #require(responses.last))["checksum"] as? String == Checksum(file).hexDigits)

        let old = Wire.head("POST", "/resumable/old", headers: ["Upload-Complete: ?1"], contentLength: 1000)
            .replacing(Data("HTTP/1.1".utf8), with: Data("HTTP/1.0".utf8))
        let answered = try await onOwnThread {
            let connection = try RawHTTP(port: server.port)
            try connection.send(old + file)
            return Wire.responses(in: Wire.readAll(from: connection))
        }
        #expect(answered.map(\.status) == [200])
        #expect(
            try Wire.json(try #require(answered.first))["uploadId"] as? String
                == server.resumableUpload(named: "old")?.id)
    }

    @Test func anUploadWithoutUploadCompleteIsAnOrdinaryOne() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let file = Self.payload(5000)
        // `?2` is no Structured Field Boolean: the field is ignored, as the draft says.
        for headers in [[], ["Upload-Complete: ?2"], ["Upload-Complete: ?1", "Upload-Complete: ?1"]] {
            let responses = try await Wire.exchange(server, "POST", "/resumable/plain", headers: headers, body: file)
            #expect(responses.map(\.status) == [200])
            #expect(responses.first?.headers["upload-complete"] == nil)
            let answer = try Wire.json(try #require(responses.first))
            #expect(answer["uploadId"] is NSNull)
            #expect(answer["checksum"] as? String == Checksum(file).hexDigits)
        }
        #expect(server.resumableUpload(named: "plain") == nil)
    }

    // MARK: Faults and resumption

    @Test func aDropAtEachPointLeavesExactlyThatOffsetToResumeFrom() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let file = Self.payload(300_000)
        let created = try await Wire.exchange(
            server, "POST", "/resumable/video?drop_at=100000,200000",
            headers: ["Upload-Complete: ?1", "Upload-Length: 300000"], body: file)
        // The 104 arrived; the reset came instead of a final answer.
        #expect(created.map(\.status) == [104])
        let location = try #require(created.first?.headers["location"])

        let first = try await Wire.exchange(server, "HEAD", location)
        #expect(first.first?.headers["upload-offset"] == "100000")
        #expect(first.first?.headers["upload-complete"] == "?0")
        #expect(first.first?.headers["upload-length"] == "300000")
        #expect(server.resumableUpload(named: "video")?.checksum == Checksum(file.prefix(100_000)).hexDigits)

        // The second point, remembered from the creation URL, cuts the first append.
        let cut = try await Wire.exchange(
            server, "PATCH", location, headers: Wire.append(at: 100_000, complete: true), body: file[100_000...])
        #expect(cut.isEmpty)
        let second = try await Wire.exchange(server, "HEAD", location)
        #expect(second.first?.headers["upload-offset"] == "200000")

        let last = try await Wire.exchange(
            server, "PATCH", location, headers: Wire.append(at: 200_000, complete: true), body: file[200_000...])
        #expect(last.map(\.status) == [200])
        #expect(try Wire.json(try #require(last.first))["checksum"] as? String == Checksum(file).hexDigits)

        let summary = try #require(server.resumableUpload(named: "video"))
        #expect(summary.offset == 300_000 && summary.isComplete)
        #expect(summary.checksum == Checksum(file).hexDigits)
        #expect(summary.bytesRead >= 300_000)
        #expect(summary.creations == 1 && summary.appends == 2 && summary.offsetRetrievals == 2)
    }

    @Test func withNo104TheUploadExistsButIsNeverAnnounced() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let file = Self.payload(20_000)
        let responses = try await Wire.exchange(
            server, "POST", "/resumable/quiet?no_104=1&drop_at=5000", headers: ["Upload-Complete: ?1"], body: file)
        #expect(responses.isEmpty)
        let summary = try #require(server.resumableUpload(named: "quiet"))
        #expect(summary.offset == 5000 && !summary.isComplete)

        // Nor is progress told on a later append.
        let rest = try await Wire.exchange(
            server, "PATCH", "/resumable/uploads/\(summary.id)", headers: Wire.append(at: 5000, complete: true),
            body: file[5000...])
        #expect(rest.map(\.status) == [200])
    }

    @Test func longBodiesAreToldTheirProgressEvery16MiB() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let size = 16 << 20 + 1
        let responses = try await Wire.exchange(
            server, "POST", "/resumable/big", headers: ["Upload-Complete: ?1"], body: Data(count: size))
        #expect(responses.map(\.status) == [104, 104, 200])
        // The offset once the piece read that passed 16 MiB was appended.
        let told = try #require(responses[1].headers["upload-offset"].flatMap { Int($0) })
        #expect((16 << 20...size).contains(told))
        #expect(responses[1].headers["location"] == nil)
    }

    @Test func aNewRequestEndsTheEarlierOneStillAppending() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let file = Self.payload(100)
        let head = Wire.head("POST", "/resumable/stuck", headers: ["Upload-Complete: ?1"], contentLength: 100)
        let earlier = try RawHTTP(port: server.port)
        let announcement = try await onOwnThread {
            try earlier.send(head + file.prefix(40))
            return Wire.readHead(from: earlier)
        }
        #expect(announcement.hasPrefix("HTTP/1.1 104 "))
        try await eventually { server.resumableUpload(named: "stuck")?.offset == 40 }
        let id = try #require(server.resumableUpload(named: "stuck")?.id)

        let later = try await Wire.exchange(
            server, "PATCH", "/resumable/uploads/\(id)", headers: Wire.append(at: 40, complete: true),
            body: file[40...])
        #expect(later.map(\.status) == [200])
        #expect(try Wire.json(try #require(later.first))["checksum"] as? String == Checksum(file).hexDigits)

        // The earlier connection was reset without an answer: it ends, and a write to it fails.
        let rest = try await onOwnThread { Wire.readAll(from: earlier) }
        #expect(rest.isEmpty)
        #expect(throws: (any Error).self) { try earlier.send(file.suffix(60)) }
        let summary = try #require(server.resumableUpload(named: "stuck"))
        #expect(summary.offset == 100 && summary.bytesRead == 100 && summary.isComplete)
    }

    // MARK: Refusals

    @Test func anAppendAtAnotherOffsetIsAConflict() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let created = try await Wire.exchange(
            server, "POST", "/resumable/doc", headers: ["Upload-Complete: ?0"], body: Self.payload(10))
        let location = try #require(created.last?.headers["location"])
        let conflict = try await Wire.exchange(
            server, "PATCH", location, headers: Wire.append(at: 5, complete: true), body: Data("later".utf8))
        #expect(conflict.map(\.status) == [409])
        let response = try #require(conflict.first)
        #expect(response.headers["upload-offset"] == "10")
        #expect(response.headers["upload-complete"] == "?0")
        #expect(response.headers["content-type"] == "application/problem+json")
        let problem = try Wire.json(response)
        #expect(
            problem["type"] as? String == "https://iana.org/assignments/http-problem-types#mismatching-upload-offset")
        #expect(problem["expected-offset"] as? Int == 10)
        #expect(problem["provided-offset"] as? Int == 5)
        let summary = try #require(server.resumableUpload(named: "doc"))
        #expect(summary.offset == 10 && summary.conflicts == 1 && summary.appends == 0)
    }

    @Test func anAppendMustBeAPartialUploadWithOffsetAndCompleteness() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let created = try await Wire.exchange(server, "POST", "/resumable/doc", headers: ["Upload-Complete: ?0"])
        let location = try #require(created.last?.headers["location"])
        let untyped = try await Wire.exchange(
            server, "PATCH", location, headers: ["Upload-Offset: 0", "Upload-Complete: ?1"], body: Data("x".utf8))
        #expect(untyped.map(\.status) == [415])

        let badFields = [
            ["Upload-Complete: ?1"], ["Upload-Offset: 0"], ["Upload-Offset: -1", "Upload-Complete: ?1"],
            ["Upload-Offset: 1234567890123456", "Upload-Complete: ?1"], ["Upload-Offset: 0x1", "Upload-Complete: ?1"],
            ["Upload-Offset: 0;p=1", "Upload-Complete: ?1"], ["Upload-Offset: 0", "Upload-Complete: true"],
            ["Upload-Offset: 0", "Upload-Offset: 0", "Upload-Complete: ?1"],
        ]
        for fields in badFields {
            let response = try await Wire.exchange(
                server, "PATCH", location, headers: ["Content-Type: application/partial-upload"] + fields,
                body: Data("x".utf8))
            #expect(response.map(\.status) == [400], "\(fields)")
        }
        #expect(server.resumableUpload(named: "doc")?.offset == 0)
    }

    @Test func aCancelledUploadIsGone() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let created = try await Wire.exchange(
            server, "POST", "/resumable/gone", headers: ["Upload-Complete: ?0"], body: Self.payload(10))
        let location = try #require(created.last?.headers["location"])
        #expect(try await Wire.exchange(server, "DELETE", location).map(\.status) == [204])
        #expect(try await Wire.exchange(server, "HEAD", location).map(\.status) == [404])
        #expect(try await Wire.exchange(server, "DELETE", location).map(\.status) == [404])
        let append = try await Wire.exchange(
            server, "PATCH", location, headers: Wire.append(at: 10, complete: true), body: Data("x".utf8))
        #expect(append.map(\.status) == [404])
        #expect(try await Wire.exchange(server, "HEAD", "/resumable/uploads/nonexistent").map(\.status) == [404])
    }

    @Test func aCompletedUploadReplaysItsFinalAnswer() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let file = Self.payload(2000)
        let created = try await Wire.exchange(
            server, "POST", "/resumable/done", headers: ["Upload-Complete: ?1"], body: file)
        let location = try #require(created.first?.headers["location"])
        let original = try #require(created.last)

        let replay = try await Wire.exchange(
            server, "PATCH", location, headers: Wire.append(at: 2000, complete: true))
        #expect(replay.map(\.status) == [200])
        #expect(replay.first?.headers["upload-complete"] == "?1")
        #expect(replay.first?.body == original.body)

        let more = try await Wire.exchange(
            server, "PATCH", location, headers: Wire.append(at: 2000, complete: true), body: Data("x".utf8))
        #expect(more.map(\.status) == [400])
        #expect(more.first?.headers["upload-complete"] == "?0")
        #expect(server.resumableUpload(named: "done")?.offset == 2000)
    }

    @Test func inconsistentLengthsAreRefused() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let type = "https://iana.org/assignments/http-problem-types#inconsistent-upload-length"
        // At creation: Upload-Length against Upload-Complete: ?1 with Content-Length.
        let creation = try await Wire.exchange(
            server, "POST", "/resumable/len", headers: ["Upload-Complete: ?1", "Upload-Length: 10"],
            body: Self.payload(5))
        #expect(creation.map(\.status) == [400])
        #expect(creation.first?.headers["upload-complete"] == "?0")
        #expect(try Wire.json(try #require(creation.first))["type"] as? String == type)
        #expect(server.resumableUpload(named: "len") == nil)

        // At an append: completing short of the recorded length deactivates the upload.
        let created = try await Wire.exchange(
            server, "POST", "/resumable/len", headers: ["Upload-Complete: ?0", "Upload-Length: 10"],
            body: Self.payload(4))
        let location = try #require(created.last?.headers["location"])
        let short = try await Wire.exchange(
            server, "PATCH", location, headers: Wire.append(at: 4, complete: true), body: Self.payload(3))
        #expect(short.map(\.status) == [400])
        #expect(try Wire.json(try #require(short.first))["type"] as? String == type)
        #expect(try await Wire.exchange(server, "HEAD", location).map(\.status) == [410])
        let after = try await Wire.exchange(
            server, "PATCH", location, headers: Wire.append(at: 4, complete: true), body: Self.payload(6))
        #expect(after.map(\.status) == [410])
    }

    @Test func aChunkedBodyPastTheLengthIsCutOffAtIt() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let head = Wire.head(
            "POST", "/resumable/long",
            headers: ["Upload-Complete: ?1", "Upload-Length: 10", "Transfer-Encoding: chunked"])
        let chunk = Data("14\r\n".utf8) + Self.payload(20) + Data("\r\n0\r\n\r\n".utf8)
        let responses = try await onOwnThread {
            let connection = try RawHTTP(port: server.port)
            try? connection.send(head + chunk)
            return Wire.responses(in: Wire.readAll(from: connection))
        }
        #expect(responses.map(\.status) == [104, 400])
        let summary = try #require(server.resumableUpload(named: "long"))
        #expect(summary.offset <= 10 && !summary.isComplete)
        #expect(try await Wire.exchange(server, "HEAD", "/resumable/uploads/\(summary.id)").map(\.status) == [410])
    }

    @Test func nonsenseIsRefusedWithoutAResource() async throws {
        let server = try TestServer()
        defer { server.stop() }
        for query in ["drop_at=x", "drop_at=1,,2", "drop_at=-1", "drop_at=1234567890123456", "no_104=yes"] {
            let response = try await Wire.exchange(
                server, "POST", "/resumable/bad?\(query)", headers: ["Upload-Complete: ?1"], body: Data("x".utf8))
            #expect(response.map(\.status) == [400], "\(query)")
        }
        let tooLarge = try await Wire.exchange(
            server, "POST", "/resumable/bad", headers: ["Upload-Complete: ?0", "Upload-Length: 1073741825"])
        #expect(tooLarge.map(\.status) == [413])
        #expect(tooLarge.first?.headers["upload-limit"] == "max-size=1073741824")
        #expect(server.resumableUpload(named: "bad") == nil)

        // A client of another draft version gets no 104, but still a resource it can find with 201.
        let other = try await Wire.exchange(
            server, "POST", "/resumable/old", headers: ["Upload-Complete: ?0", "Upload-Draft-Interop-Version: 6"])
        #expect(other.map(\.status) == [201])
    }
}

/// Raw HTTP/1.1 requests and the sequence of responses, interim ones included, that answer them.
private enum Wire {
    /// The fields of an append at `offset`.
    static func append(at offset: Int, complete: Bool) -> [String] {
        [
            "Content-Type: application/partial-upload", "Upload-Offset: \(offset)",
            "Upload-Complete: \(complete ? "?1" : "?0")",
        ]
    }

    static func head(_ method: String, _ target: String, headers: [String], contentLength: Int? = nil) -> Data {
        var lines = ["\(method) \(target) HTTP/1.1", "Host: 127.0.0.1", "Connection: close"] + headers
        if let contentLength { lines.append("Content-Length: \(contentLength)") }
        return Data((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
    }

    /// Sends the request whole on a connection of its own (a reset while sending just ends the
    /// sending) and reads every response until the server closes or resets the connection.
    static func exchange(
        _ server: TestServer, _ method: String, _ target: String, headers: [String] = [], body: Data = Data()
    ) async throws -> [RawHTTP.Response] {
        let request = head(method, target, headers: headers, contentLength: body.count) + body
        return try await onOwnThread {
            let connection = try RawHTTP(port: server.port)
            try? connection.send(request)
            return responses(in: readAll(from: connection), bodiless: method == "HEAD")
        }
    }

    static func readAll(from connection: RawHTTP) -> Data {
        var received = Data()
        while let piece = connection.receive() { received.append(piece) }
        return received
    }

    /// The first head that arrives, as text.
    static func readHead(from connection: RawHTTP) -> String {
        var received = Data()
        while received.range(of: Data("\r\n\r\n".utf8)) == nil, let piece = connection.receive() {
            received.append(piece)
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// Interim heads, then the final response with the body its `Content-Length` gives.
    static func responses(in data: Data, bodiless: Bool = false) -> [RawHTTP.Response] {
        var responses: [RawHTTP.Response] = []
        var rest = data[...]
        while let end = rest.range(of: Data("\r\n\r\n".utf8)) {
            let lines = String(decoding: rest[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
            rest = rest[end.upperBound...]
            let status = Int(lines.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
            var headers: [String: String] = [:]
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...]
                    .trimmingCharacters(in: .whitespaces)
            }
            let length = status >= 200 && !bodiless ? headers["content-length"].flatMap { Int($0) } ?? 0 : 0
            responses.append(RawHTTP.Response(status: status, headers: headers, body: Data(rest.prefix(length))))
            rest = rest.dropFirst(length)
            if status >= 200 { break }
        }
        return responses
    }

    static func json(_ response: RawHTTP.Response) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: response.body) as? [String: Any])
    }
}
