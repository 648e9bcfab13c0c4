import ErrandScenarios
import Foundation
import Testing

@testable import ErrandTestServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `/range`, `/download`, multipart echo and `/upload` on a server of their own, so the
/// download version and the recorded requests of one test never leak into another.
@Suite("TestServer transfer endpoints")
struct TestServerTransferEndpointsTests {
    // MARK: /range

    @Test func rangeServesTheAlphabetWholeOrInPart() async throws {
        let server = try TestServer()
        let whole = try await RawHTTP.get(server, "/range/30")
        #expect(whole.status == 200)
        #expect(whole.body == Data("abcdefghijklmnopqrstuvwxyzabcd".utf8))
        #expect(whole.headers["etag"] == "range30")
        #expect(whole.headers["accept-ranges"] == "bytes")
        #expect(whole.headers["content-range"] == "bytes 0-29/30")

        let part = try await RawHTTP.get(server, "/range/30", headers: ["Range: bytes=5-9"])
        #expect(part.status == 206)
        #expect(part.body == Data("fghij".utf8))
        #expect(part.headers["content-range"] == "bytes 5-9/30")

        let suffix = try await RawHTTP.get(server, "/range/30", headers: ["Range: bytes=-5"])
        #expect(suffix.status == 206)
        #expect(suffix.body == Data("zabcd".utf8))
    }

    @Test func rangeRefusesWhatHttpbinRefuses() async throws {
        let server = try TestServer()
        let unsatisfiable = try await RawHTTP.get(server, "/range/30", headers: ["Range: bytes=30-"])
        #expect(unsatisfiable.status == 416)
        #expect(unsatisfiable.headers["content-range"] == "bytes */30")
        #expect(unsatisfiable.headers["content-length"] == "0")

        let tooLarge = try await RawHTTP.get(server, "/range/102401")
        #expect(tooLarge.status == 404)
        #expect(tooLarge.headers["etag"] == "range102401")
        #expect(String(decoding: tooLarge.body, as: UTF8.self) == "number of bytes must be in the range (0, 102400]")

        #expect(try await RawHTTP.get(server, "/range/30?chunk_size=x").status == 500)
    }

    // MARK: /download

    @Test func downloadServesTheDocumentedContentAndValidators() async throws {
        let server = try TestServer()
        let (body, response) = try await URLSession.shared.data(
            from: try #require(URL(string: server.baseURL + "/download/100000")))
        let http = try #require(response as? HTTPURLResponse)
        #expect(http.statusCode == 200)
        #expect(body == TestServer.downloadContent(size: 100_000, version: 1, range: 0..<100_000))
        #expect(http.value(forHTTPHeaderField: "ETag") == "\"v1-100000\"")
        #expect(http.value(forHTTPHeaderField: "Accept-Ranges") == "bytes")
        #expect(http.value(forHTTPHeaderField: "Last-Modified") != nil)
        #expect(http.value(forHTTPHeaderField: "Content-Type") == "application/octet-stream")
    }

    @Test func downloadResumesWithRangeAndIfRange() async throws {
        let server = try TestServer()
        let size = 200_000
        let first = try await RawHTTP.get(server, "/download/\(size)")
        let etag = try #require(first.headers["etag"])
        let lastModified = try #require(first.headers["last-modified"])

        for validator in [etag, lastModified] {
            let resumed = try await RawHTTP.get(
                server, "/download/\(size)", headers: ["Range: bytes=150000-", "If-Range: \(validator)"])
            #expect(resumed.status == 206)
            #expect(resumed.headers["content-range"] == "bytes 150000-199999/\(size)")
            #expect(resumed.body == TestServer.downloadContent(size: size, version: 1, range: 150_000..<size))
        }

        let closed = try await RawHTTP.get(server, "/download/\(size)", headers: ["Range: bytes=10-19"])
        #expect(closed.status == 206)
        #expect(closed.body == first.body[10..<20])

        let recorded = try #require(server.receivedRequests(path: "/download/").last)
        #expect(recorded.header("range") == "bytes=10-19")
        #expect(server.receivedRequests(path: "/download/").count == 4)
        #expect(server.receivedRequests(path: "/download/")[1].header("If-Range") == etag)
    }

    @Test func downloadChangesWithTheVersionAndIgnoresAStaleIfRange() async throws {
        let server = try TestServer()
        let before = try await RawHTTP.get(server, "/download/5000")
        server.downloadVersion = 2
        #expect(server.downloadVersion == 2)

        let stale = try await RawHTTP.get(
            server, "/download/5000", headers: ["Range: bytes=1000-", "If-Range: \(before.headers["etag"] ?? "")"])
        #expect(stale.status == 200)
        #expect(stale.headers["etag"] == "\"v2-5000\"")
        #expect(stale.headers["last-modified"] != before.headers["last-modified"])
        #expect(stale.body == TestServer.downloadContent(size: 5000, version: 2, range: 0..<5000))
        #expect(stale.body != before.body)
    }

    @Test func downloadAnswers416AndIgnoresRangeOnRequest() async throws {
        let server = try TestServer()
        let unsatisfiable = try await RawHTTP.get(server, "/download/100", headers: ["Range: bytes=100-"])
        #expect(unsatisfiable.status == 416)
        #expect(unsatisfiable.headers["content-range"] == "bytes */100")
        #expect(unsatisfiable.body.isEmpty)

        let ignored = try await RawHTTP.get(server, "/download/100?ignore_range=1", headers: ["Range: bytes=50-"])
        #expect(ignored.status == 200)
        #expect(ignored.body == TestServer.downloadContent(size: 100, version: 1, range: 0..<100))
    }

    @Test func downloadDropsTheConnectionAfterKBytes() async throws {
        let server = try TestServer()
        let dropped = try await RawHTTP.get(
            server, "/download/300000?drop_after=70000", headers: ["Range: bytes=1000-"])
        #expect(dropped.status == 206)
        #expect(dropped.headers["content-length"] == "299000")
        #expect(dropped.body == TestServer.downloadContent(size: 300_000, version: 1, range: 1000..<71_000))

        let url = try #require(URL(string: server.baseURL + "/download/300000?drop_after=70000"))
        await #expect(throws: (any Error).self) {
            _ = try await URLSession.shared.data(from: url)
        }
    }

    @Test func a32MiBDownloadMatchesItsChecksumChunkByChunk() async throws {
        let server = try TestServer()
        let size = 32 << 20
        let download = try await RawHTTP.get(server, "/download/\(size)")
        #expect(download.body.count == size)

        let (received, expected) = try await onOwnThread {
            (Checksum(download.body).value, TransferFixture.expectedChecksum(size: size, version: 1))
        }
        #expect(received == expected)
    }

    @Test func stopEndsAThrottledDownloadPromptly() async throws {
        let server = try TestServer()
        let (received, secondsToClose) = try await onOwnThread { () throws -> (Int, TimeInterval) in
            let connection = try RawHTTP(port: server.port)
            try connection.send(Data("GET /download/1000000?rate=20000 HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
            var received = 0
            while received < 4000, let chunk = connection.receive() { received += chunk.count }

            let started = Date()
            server.stop()
            while connection.receive() != nil {}
            return (received, Date().timeIntervalSince(started))
        }
        // The throttled body would take 50 s: a stop that waits for it is not a stop.
        #expect(secondsToClose < 20)
        #expect(received < 100_000)
    }

    // MARK: Multipart

    @Test func multipartFilesAndFieldsAreEchoedLikeHttpbin() async throws {
        let server = try TestServer()
        let binary = Data([0xFF, 0x00, 0x80, 0x41])
        var body = Data()
        func part(_ disposition: String, _ contentType: String? = nil, _ content: Data) {
            body.append(Data("--XyZ\r\nContent-Disposition: form-data; \(disposition)\r\n".utf8))
            if let contentType { body.append(Data("Content-Type: \(contentType)\r\n".utf8)) }
            body.append(Data("\r\n".utf8) + content + Data("\r\n".utf8))
        }
        part(#"name="note"; filename="note.txt""#, "text/plain", Data("hello\n".utf8))
        part(#"name="blob"; filename="blob.bin""#, "image/png", binary)
        part(#"name="tag""#, nil, Data("a".utf8))
        part(#"name="tag""#, nil, Data("b".utf8))
        part(#"name="title""#, nil, Data("Résumé".utf8))
        body.append(Data("--XyZ--\r\n".utf8))

        var request = URLRequest(url: try #require(URL(string: server.baseURL + "/post")))
        request.httpMethod = "POST"
        request.setValue(#"multipart/form-data; boundary="XyZ""#, forHTTPHeaderField: "Content-Type")
        let (data, _) = try await URLSession.shared.upload(for: request, from: body)
        let echo = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])

        let files = try #require(echo["files"] as? [String: String])
        #expect(files == ["note": "hello\n", "blob": "data:image/png;base64,\(binary.base64EncodedString())"])
        let form = try #require(echo["form"] as? [String: Any])
        #expect(form["tag"] as? [String] == ["a", "b"])
        #expect(form["title"] as? String == "Résumé")
        #expect(echo["data"] as? String == "")
        #expect(echo["json"] is NSNull)
    }

    @Test func aMalformedMultipartBodyGivesEmptyFormAndFiles() async throws {
        let server = try TestServer()
        let body = "--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nno closing boundary"
        let response = try await RawHTTP.exchange(
            port: server.port,
            Data(
                ("POST /post HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                    + "Content-Type: multipart/form-data; boundary=XyZ\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
                    + body).utf8))
        let echo = try #require(try JSONSerialization.jsonObject(with: response.body) as? [String: Any])
        #expect(response.status == 200)
        #expect((echo["form"] as? [String: Any])?.isEmpty == true)
        #expect((echo["files"] as? [String: Any])?.isEmpty == true)
    }

    // MARK: /upload

    @Test func uploadCountsAndChecksumsAContentLengthBody() async throws {
        let server = try TestServer()
        let payload = TestServer.downloadContent(size: 3_000_000, version: 7, range: 0..<3_000_000)
        var request = URLRequest(url: try #require(URL(string: server.baseURL + "/upload")))
        request.httpMethod = "PUT"
        request.setValue("application/x-test", forHTTPHeaderField: "Content-Type")
        let (data, _) = try await URLSession.shared.upload(for: request, from: payload)

        let answer = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(answer["bytes"] as? Int == payload.count)
        #expect(answer["checksum"] as? String == Checksum(payload).hexDigits)
        #expect(answer["content_type"] as? String == "application/x-test")
    }

    @Test func uploadReadsAChunkedBodyAndKeepsTheConnection() async throws {
        let server = try TestServer()
        let pieces = [Data("hello ".utf8), Data(repeating: 0x7A, count: 100_000), Data("!".utf8)]
        var wire = Data("POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        for piece in pieces {
            wire.append(Data((String(piece.count, radix: 16) + "\r\n").utf8) + piece + Data("\r\n".utf8))
        }
        wire.append(Data("0\r\n\r\nGET /range/3 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
        let everything = try await RawHTTP.exchange(port: server.port, wire, wholeStream: true)

        let text = String(decoding: everything.body, as: UTF8.self)
        var expected = Checksum()
        pieces.forEach { expected.update($0) }
        #expect(text.contains(#""bytes" : 100007"#))
        #expect(text.contains(#""checksum" : "\#(expected.hexDigits)""#))
        // The pipelined request after the streamed body is answered on the same connection.
        #expect(text.hasSuffix("\r\n\r\nabc"))
    }

    @Test func checksumIsFNV1a64WhateverTheChunking() {
        var split = Checksum()
        split.update(Data("ab".utf8))
        split.update(Data("c".utf8))
        #expect(split.value == 0xE71F_A219_0541_574B)
        #expect(split == Checksum(Data("abc".utf8)))
        #expect(Checksum().hexDigits == "cbf29ce484222325")
    }
}
