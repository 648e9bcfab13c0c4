import Foundation

/// Turns the bytes of one connection into requests: feed it with `append(_:)`, then call
/// `next()` until it answers `.incomplete`. Pipelined requests come out one by one.
///
/// It is strict where leniency would make framing ambiguous (both `Content-Length` and
/// `Transfer-Encoding`, folded headers, bad chunk sizes) and lenient where it costs nothing
/// (bare LF line endings, blank lines before a request).
///
/// Requests for which `streamsBody` answers `true` come out as soon as their head is in; their
/// body is then pulled with `nextBodyChunk()` until `.end`, so it is never held whole.
struct HTTPRequestParser {
    /// Request line plus headers.
    static let maxHeadSize = 64 * 1024
    /// Only for bodies collected whole; a streamed body has no limit.
    static let maxBodySize = 128 * 1024 * 1024

    enum Outcome {
        case incomplete
        case request(HTTPRequest)
        /// A request with an empty `body`: read the real one with `nextBodyChunk()` before
        /// calling `next()` again.
        case streamingRequest(HTTPRequest)
        /// The connection cannot continue: answer with `status` and close.
        case failure(status: Int, reason: String)
    }

    enum BodyChunk {
        case data(Data)
        case end
        case incomplete
        case failure(status: Int, reason: String)
    }

    private enum Framing {
        case none
        case length(Int)
        case chunked
    }

    private struct Head {
        var method: String
        var target: String
        var version: String
        var headers: [HTTPHeader]
        var bodyStart: Int
        var framing: Framing
        var expectsContinue: Bool
    }

    private struct Failure: Error {
        var status: Int
        var reason: String
    }

    /// Where a streamed body stands; `nil` when no body is being streamed.
    private enum StreamedBody {
        case length(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkEnd
        case trailers
    }

    private let peerAddress: String
    private let streamsBody: (HTTPRequest) -> Bool
    private var buffer: [UInt8] = []
    /// Where to resume looking for the end of the head, so a slowly arriving head is scanned once.
    private var scannedUpTo = 0
    private var head: Head?
    private var requestLineChecked = false
    private var continuePending = false
    private var streamed: StreamedBody?
    /// The trailer fields of the streamed body read last, once it has ended.
    private(set) var streamedTrailers: [HTTPHeader] = []
    /// Bytes of the streamed body's trailer lines so far, bounded as a head is.
    private var streamedTrailerBytes = 0

    init(peerAddress: String, streamsBody: @escaping (HTTPRequest) -> Bool = { _ in false }) {
        self.peerAddress = peerAddress
        self.streamsBody = streamsBody
    }

    mutating func append(_ bytes: ArraySlice<UInt8>) {
        buffer.append(contentsOf: bytes)
    }

    /// `true` once per request whose client sent `Expect: 100-continue` and now waits for a
    /// go-ahead before sending the body (curl waits a whole second otherwise).
    mutating func takeContinueRequest() -> Bool {
        defer { continuePending = false }
        return continuePending
    }

    mutating func next() -> Outcome {
        do throws(Failure) {
            if head == nil {
                guard let parsed = try parseHead() else { return .incomplete }
                head = parsed
                continuePending = parsed.expectsContinue
                let request = HTTPRequest(
                    method: parsed.method, target: parsed.target, version: parsed.version,
                    headers: parsed.headers, body: Data(), peerAddress: peerAddress)
                if streamsBody(request) {
                    startStreaming(parsed)
                    return .streamingRequest(request)
                }
                if case .length(let length) = parsed.framing, length > Self.maxBodySize {
                    throw Failure(status: 413, reason: "Body larger than \(Self.maxBodySize) bytes")
                }
            }
            guard let head, let (body, end) = try parseBody(of: head) else { return .incomplete }
            buffer.removeFirst(end)
            resetForNextRequest()
            return .request(
                HTTPRequest(
                    method: head.method, target: head.target, version: head.version,
                    headers: head.headers, body: body, peerAddress: peerAddress))
        } catch {
            return .failure(status: error.status, reason: error.reason)
        }
    }

    private mutating func resetForNextRequest() {
        head = nil
        scannedUpTo = 0
        requestLineChecked = false
        continuePending = false
    }

    // MARK: Head

    private mutating func parseHead() throws(Failure) -> Head? {
        // RFC 9112 §2.2: ignore empty lines that precede a request line.
        if let firstContent = buffer.firstIndex(where: { $0 != cr && $0 != lf }), firstContent > 0 {
            buffer.removeFirst(firstContent)
            scannedUpTo = 0
        } else if buffer.allSatisfy({ $0 == cr || $0 == lf }) {
            buffer.removeAll(keepingCapacity: true)
            return nil
        }
        guard let headEnd = findHeadEnd() else {
            // Garbage gets its 400 as soon as its first line is in, not after 64 KiB or never.
            if !requestLineChecked, let newline = buffer.firstIndex(of: lf) {
                let line = buffer[..<newline]
                _ = try parseRequestLine(line.last == cr ? line.dropLast() : line)
                requestLineChecked = true
            }
            if buffer.count > Self.maxHeadSize {
                throw Failure(status: 431, reason: "Request head larger than \(Self.maxHeadSize) bytes")
            }
            return nil
        }
        guard headEnd <= Self.maxHeadSize else {
            throw Failure(status: 431, reason: "Request head larger than \(Self.maxHeadSize) bytes")
        }

        var lines = buffer[..<headEnd].split(separator: lf, omittingEmptySubsequences: false).map {
            $0.last == cr ? $0.dropLast() : $0
        }
        while lines.last?.isEmpty == true { lines.removeLast() }
        guard let requestLine = lines.first else { throw Failure(status: 400, reason: "Missing request line") }

        let (method, target, version) = try parseRequestLine(requestLine)
        let headers = try lines.dropFirst().map(parseHeaderLine)
        let framing = try framing(of: headers)
        let expectsContinue =
            version == "HTTP/1.1"
            && headers.first("Expect")?.lowercased() == "100-continue"
        return Head(
            method: method, target: target, version: version, headers: headers,
            bodyStart: headEnd, framing: framing, expectsContinue: expectsContinue)
    }

    /// The index just past the blank line that ends the head, accepting CRLF or bare LF.
    private mutating func findHeadEnd() -> Int? {
        var index = max(scannedUpTo, 1)
        while index < buffer.count {
            if buffer[index] == lf {
                if buffer[index - 1] == lf { return index + 1 }
                if index >= 2 && buffer[index - 1] == cr && buffer[index - 2] == lf { return index + 1 }
            }
            index += 1
        }
        scannedUpTo = max(buffer.count - 2, 1)
        return nil
    }

    private func parseRequestLine(_ line: ArraySlice<UInt8>) throws(Failure) -> (String, String, String) {
        let parts = line.split(separator: space, omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw Failure(status: 400, reason: "Malformed request line") }
        let method = String(decoding: parts[0], as: UTF8.self)
        let target = String(decoding: parts[1], as: UTF8.self)
        let version = String(decoding: parts[2], as: UTF8.self)
        guard !parts[0].isEmpty, parts[0].allSatisfy(isTokenByte) else {
            throw Failure(status: 400, reason: "Malformed method")
        }
        guard !parts[1].isEmpty, parts[1].allSatisfy({ $0 > space && $0 != 0x7F }),
            // Absolute-form's scheme is case-insensitive (RFC 3986 §3.1).
            target.hasPrefix("/") || ["http://", "https://"].contains(where: { target.lowercased().hasPrefix($0) })
                || (target == "*" && method == "OPTIONS")
        else {
            throw Failure(status: 400, reason: "Malformed request target")
        }
        guard version == "HTTP/1.1" || version == "HTTP/1.0" else {
            throw Failure(status: 400, reason: "Unsupported HTTP version")
        }
        return (method, target, version)
    }

    private func parseHeaderLine(_ line: ArraySlice<UInt8>) throws(Failure) -> HTTPHeader {
        // Obsolete line folding (RFC 9112 §5.2) is rejected rather than guessed at.
        guard let colon = line.firstIndex(of: colonByte), line.first != space, line.first != tab else {
            throw Failure(status: 400, reason: "Malformed header line")
        }
        let name = line[..<colon]
        guard !name.isEmpty, name.allSatisfy(isTokenByte) else {
            throw Failure(status: 400, reason: "Malformed header name")
        }
        var value = line[line.index(after: colon)...]
        while let first = value.first, first == space || first == tab { value.removeFirst() }
        while let last = value.last, last == space || last == tab { value.removeLast() }
        guard value.allSatisfy({ $0 >= space || $0 == tab }), !value.contains(0x7F) else {
            throw Failure(status: 400, reason: "Control character in header value")
        }
        return HTTPHeader(String(decoding: name, as: UTF8.self), received: value)
    }

    private func framing(of headers: [HTTPHeader]) throws(Failure) -> Framing {
        let transferEncodings = headers.values(for: "Transfer-Encoding")
        let contentLengths = headers.values(for: "Content-Length")
        if !transferEncodings.isEmpty {
            // Both at once is the classic request-smuggling shape; refuse instead of picking one.
            guard contentLengths.isEmpty else {
                throw Failure(status: 400, reason: "Both Content-Length and Transfer-Encoding")
            }
            let codings = transferEncodings.joined(separator: ",").split(separator: ",")
                .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
                .filter { !$0.isEmpty }
            guard codings == ["chunked"] else {
                throw Failure(status: 501, reason: "Unsupported Transfer-Encoding")
            }
            return .chunked
        }
        guard !contentLengths.isEmpty else { return .none }
        let lengths = Set(
            contentLengths.joined(separator: ",").split(separator: ",", omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces) })
        guard lengths.count == 1, let text = lengths.first, !text.isEmpty, text.count <= 18,
            text.allSatisfy({ $0.isASCII && $0.isNumber }), let length = Int(text)
        else {
            throw Failure(status: 400, reason: "Malformed Content-Length")
        }
        return length == 0 ? .none : .length(length)
    }

    // MARK: Body

    /// The decoded body and the index just past the request, or `nil` until all of it is here.
    private func parseBody(of head: Head) throws(Failure) -> (Data, Int)? {
        switch head.framing {
        case .none:
            return (Data(), head.bodyStart)
        case .length(let length):
            guard buffer.count - head.bodyStart >= length else { return nil }
            return (Data(buffer[head.bodyStart..<head.bodyStart + length]), head.bodyStart + length)
        case .chunked:
            return try parseChunkedBody(from: head.bodyStart)
        }
    }

    /// Walks the chunk headers from the start of the body each time more data arrives; that
    /// only jumps from size line to size line, and copies the data once, when it is complete.
    private func parseChunkedBody(from start: Int) throws(Failure) -> (Data, Int)? {
        var chunks: [Range<Int>] = []
        var total = 0
        var index = start
        while true {
            guard let line = try readLine(from: index) else { return nil }
            index = line.next
            let size = try chunkSize(line.bytes)
            if size == 0 { break }
            total += size
            guard total <= Self.maxBodySize else {
                throw Failure(status: 413, reason: "Body larger than \(Self.maxBodySize) bytes")
            }
            guard buffer.count >= index + size + 1 else { return nil }
            chunks.append(index..<index + size)
            index += size
            // The chunk's data must be followed by its own line ending.
            if buffer[index] == cr {
                guard buffer.count >= index + 2 else { return nil }
                guard buffer[index + 1] == lf else { throw Failure(status: 400, reason: "Malformed chunk") }
                index += 2
            } else if buffer[index] == lf {
                index += 1
            } else {
                throw Failure(status: 400, reason: "Malformed chunk")
            }
        }
        // Trailer fields are read and dropped; a blank line ends the message.
        let trailersStart = index
        while true {
            guard let line = try readLine(from: index, limit: Self.maxHeadSize) else { return nil }
            index = line.next
            try Self.checkTrailerSize(index - trailersStart)
            if line.bytes.isEmpty { break }
        }
        var body = Data(capacity: total)
        for chunk in chunks { body.append(contentsOf: buffer[chunk]) }
        return (body, index)
    }

    /// Trailer fields, like a head, take at most ``maxHeadSize`` bytes.
    private static func checkTrailerSize(_ size: Int) throws(Failure) {
        guard size <= maxHeadSize else {
            throw Failure(status: 431, reason: "Trailer fields larger than \(maxHeadSize) bytes")
        }
    }

    /// The size a chunk-size line announces; extensions after `;` are ignored.
    private func chunkSize(_ line: ArraySlice<UInt8>) throws(Failure) -> Int {
        let sizeText = line.prefix { $0 != semicolon }.filter { $0 != space && $0 != tab }
        guard !sizeText.isEmpty, sizeText.count <= 15, sizeText.allSatisfy(isHexDigit),
            let size = Int(String(decoding: sizeText, as: UTF8.self), radix: 16)
        else {
            throw Failure(status: 400, reason: "Malformed chunk size")
        }
        return size
    }

    // MARK: Streamed body

    private mutating func startStreaming(_ head: Head) {
        buffer.removeFirst(head.bodyStart)
        streamedTrailers = []
        streamedTrailerBytes = 0
        switch head.framing {
        case .none: streamed = nil
        case .length(let length): streamed = .length(remaining: length)
        case .chunked: streamed = .chunkSize
        }
        if streamed == nil { resetForNextRequest() }
    }

    /// The next decoded piece of a streamed body, consuming it from the buffer so memory stays
    /// at one read's worth whatever the body's size.
    mutating func nextBodyChunk() -> BodyChunk {
        do throws(Failure) {
            while let state = streamed {
                switch state {
                case .length(let remaining):
                    guard let chunk = takeData(upTo: remaining) else { return .incomplete }
                    streamed = remaining == chunk.count ? nil : .length(remaining: remaining - chunk.count)
                    return .data(chunk)
                case .chunkSize:
                    guard let line = try readLine(from: 0) else { return .incomplete }
                    let size = try chunkSize(line.bytes)
                    buffer.removeFirst(line.next)
                    streamed = size == 0 ? .trailers : .chunkData(remaining: size)
                case .chunkData(let remaining):
                    guard let chunk = takeData(upTo: remaining) else { return .incomplete }
                    streamed = remaining == chunk.count ? .chunkEnd : .chunkData(remaining: remaining - chunk.count)
                    return .data(chunk)
                case .chunkEnd:
                    // The chunk's data must be followed by its own line ending.
                    guard let line = try readLine(from: 0) else { return .incomplete }
                    guard line.bytes.isEmpty else { throw Failure(status: 400, reason: "Malformed chunk") }
                    buffer.removeFirst(line.next)
                    streamed = .chunkSize
                case .trailers:
                    // A blank line ends the message.
                    guard let line = try readLine(from: 0, limit: Self.maxHeadSize) else { return .incomplete }
                    buffer.removeFirst(line.next)
                    streamedTrailerBytes += line.next
                    try Self.checkTrailerSize(streamedTrailerBytes)
                    if line.bytes.isEmpty {
                        streamed = nil
                    } else {
                        streamedTrailers.append(try parseHeaderLine(line.bytes))
                    }
                }
            }
            resetForNextRequest()
            return .end
        } catch {
            streamed = nil
            return .failure(status: error.status, reason: error.reason)
        }
    }

    private mutating func takeData(upTo limit: Int) -> Data? {
        guard !buffer.isEmpty else { return nil }
        let count = min(limit, buffer.count)
        defer { buffer.removeFirst(count) }
        return Data(buffer[..<count])
    }

    /// One line starting at `index` without its line ending, and the index after it; a line of
    /// more than `limit` bytes is refused, however the reads cut it.
    private func readLine(from index: Int, limit: Int = 4096) throws(Failure) -> (
        bytes: ArraySlice<UInt8>, next: Int
    )? {
        guard index <= buffer.count else { return nil }
        guard let newline = buffer[index...].firstIndex(of: lf) else {
            if buffer.count - index > limit { throw Failure(status: 400, reason: "Chunk line too long") }
            return nil
        }
        let line = buffer[index..<newline]
        return (line.last == cr ? line.dropLast() : line, newline + 1)
    }
}

private let cr: UInt8 = 0x0D
private let lf: UInt8 = 0x0A
private let space: UInt8 = 0x20
private let tab: UInt8 = 0x09
private let colonByte: UInt8 = 0x3A
private let semicolon: UInt8 = 0x3B

/// RFC 9110 `tchar`: the bytes allowed in methods and header names.
private func isTokenByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"):
        return true
    default:
        return "!#$%&'*+-.^_`|~".utf8.contains(byte)
    }
}

private func isHexDigit(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
        UInt8(ascii: "A")...UInt8(ascii: "F"):
        return true
    default:
        return false
    }
}
