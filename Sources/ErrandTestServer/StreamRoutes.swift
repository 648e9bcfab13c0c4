import Foundation

/// Errand's streaming endpoints — Server-Sent Events, JSON lines, lines cut at odd places and an
/// OpenAI-style chat completion — sent chunked as they are produced, for tests of a client that
/// reads a response as it arrives. `/stream/{n}` is httpbin's; the rest are not. ``TestServer``'s
/// streaming documentation (`TestServer+Stream.swift`) describes each.
enum StreamRoutes {
    static let all: [Route] =
        [
            Route(["GET"], "/sse/events", handler: events),
            Route(["GET"], "/sse/endless", handler: endless),
            Route(["GET"], "/sse/long-line", handler: longLine),
            Route(["GET"], "/stream/{n}", handler: stream),
            Route(["GET"], "/lines", handler: lines),
        ] + ChatCompletionRoutes.all

    /// The largest piece `/sse/endless` and `/sse/long-line` write at once: what one chunk costs the server.
    static let chunkSize = 64 * 1024

    /// `text/event-stream` (or `contentType`), never cached, as event sources are served.
    static func eventStreamHeaders(contentType: String = "text/event-stream") -> [HTTPHeader] {
        [HTTPHeader("Content-Type", contentType), HTTPHeader("Cache-Control", "no-cache")]
    }

    private static func badRequest(_ reason: String) -> HTTPResponse {
        .text(reason + "\n", status: 400)
    }

    /// Whether `text` can stand in a header or an SSE field without ending its line.
    private static func isSingleLine(_ text: String) -> Bool {
        !text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
    }

    // MARK: /sse/events

    /// `count` events (default 3) `id: K`, `event: NAME`, `data: {"n":K}`, K counting on from the
    /// request's `Last-Event-ID`, each its own chunk `interval` ms apart; then, with `drop=1`, a
    /// close without the last chunk. With `timestamp=1` the data is `{"n":K,"t":NANOSECONDS}`, the
    /// system-wide monotonic clock read just before the event's chunk is sent, for measuring how
    /// long an event takes to reach its consumer.
    private static func events(_ context: RouteContext) -> HTTPResponse {
        guard let count = context.queryInteger("count", in: 0...1_000_000),
            let interval = context.queryInteger("interval", in: 0...3_600_000),
            let retry = context.queryInteger("retry", in: 0...86_400_000),
            let status = context.queryInteger("status", in: 200...599)
        else {
            return badRequest(
                "count (≤ 1000000), interval, retry (milliseconds) and status (200-599) must be whole numbers")
        }
        let name = context.query("event") ?? "tick"
        let contentType = context.query("content_type") ?? "text/event-stream"
        guard !name.isEmpty, isSingleLine(name), isSingleLine(contentType) else {
            return badRequest("event and content_type must be single lines")
        }
        switch status ?? 200 {
        case 200: break
        case 204: return HTTPResponse(status: 204)
        case let other: return .text("/sse/events answers \(other) as asked\n", status: other)
        }

        let drops = ["1", "true", "yes"].contains(context.query("drop") ?? "")
        let stamps = ["1", "true", "yes"].contains(context.query("timestamp") ?? "")
        let lastID = context.request.headers.first("Last-Event-ID").flatMap {
            Int($0.trimmingCharacters(in: .whitespaces))
        }
        let first = (lastID ?? 0) &+ 1
        let pause = Double(interval ?? 0) / 1000
        let server = context.server
        return HTTPResponse(status: 200, headers: eventStreamHeaders(contentType: contentType)) { write in
            if let retry, !write(Data("retry: \(retry)\n\n".utf8)) { return .drop }
            for offset in 0..<(count ?? 3) {
                if offset > 0 && pause > 0 { server.sleep(seconds: pause) }
                let id = first &+ offset
                let stamp = stamps ? ",\"t\":\(TestServer.monotonicNanoseconds())" : ""
                guard write(Data("id: \(id)\nevent: \(name)\ndata: {\"n\":\(id)\(stamp)}\n\n".utf8)) else {
                    return .drop
                }
            }
            return drops ? .drop : .complete
        }
    }

    // MARK: /sse/endless

    /// `data: {"n":K}\n\n` for K = 1, 2, … in chunks of up to 64 KiB, made as the socket takes
    /// them: until the client hangs up or the server stops, or exactly `size` bytes (the last event
    /// cut short where `size` falls). A gigabyte costs the server one chunk of memory.
    private static func endless(_ context: RouteContext) -> HTTPResponse {
        guard let size = context.queryInteger("size", in: 0...Int.max) else {
            return badRequest("size must be a whole number ≥ 0")
        }
        return HTTPResponse(status: 200, headers: eventStreamHeaders()) { write in
            var remaining = size ?? Int.max
            var pending: [UInt8] = []
            pending.reserveCapacity(chunkSize + 64)
            var event = Array(#"data: {"n":1}"#.utf8) + Array("\n\n".utf8)
            while remaining > 0 {
                let count = min(chunkSize, remaining)
                while pending.count < count {
                    pending.append(contentsOf: event)
                    incrementEndlessEvent(&event)
                }
                guard write(Data(pending[..<count])) else { return .drop }
                pending.removeSubrange(..<count)
                remaining -= count
            }
            return .complete
        }
    }

    /// Turns `data: {"n":K}\n\n` into the event for K + 1 by counting up its digits in place: a
    /// gigabyte is 60 million events, too many to format one by one.
    private static func incrementEndlessEvent(_ event: inout [UInt8]) {
        let firstDigit = #"data: {"n":"#.utf8.count
        var index = event.count - "}\n\n".utf8.count - 1
        while index >= firstDigit {
            if event[index] != UInt8(ascii: "9") {
                event[index] += 1
                return
            }
            event[index] = UInt8(ascii: "0")
            index -= 1
        }
        event.insert(UInt8(ascii: "1"), at: firstDigit)
    }

    // MARK: /sse/long-line

    /// `data: `, then `bytes` (default 1 MiB) bytes of `x` in 64 KiB chunks with no newline, then
    /// `\n\n`: one event whose line is as long as asked, for a client's line limits.
    private static func longLine(_ context: RouteContext) -> HTTPResponse {
        guard let bytes = context.queryInteger("bytes", in: 0...Int.max) else {
            return badRequest("bytes must be a whole number ≥ 0")
        }
        return HTTPResponse(status: 200, headers: eventStreamHeaders()) { write in
            guard write(Data("data: ".utf8)) else { return .drop }
            let piece = Data(repeating: UInt8(ascii: "x"), count: chunkSize)
            var remaining = bytes ?? 1 << 20
            while remaining > 0 {
                let count = min(chunkSize, remaining)
                guard write(count == chunkSize ? piece : piece.prefix(count)) else { return .drop }
                remaining -= count
            }
            return write(Data("\n\n".utf8)) ? .complete : .drop
        }
    }

    // MARK: /stream/{n}

    /// httpbin's `/stream/<int:n>`: min(n, 100) lines, each `/get`'s JSON (`url`, `args`, `headers`,
    /// `origin`) with `id` 0, 1, …, one chunk each. The JSON is compact with sorted keys, where
    /// httpbin's Python writes `", "` and `": "` in its own key order: equal as JSON, not as bytes.
    private static func stream(_ context: RouteContext) -> HTTPResponse {
        let digits = context.parameters["n"] ?? ""
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return .notFound }
        let count = min(Int(digits) ?? Int.max, 100)
        // At most 100 small lines: made before the first is sent, still sent a chunk each.
        var item = HTTPBinEcho(request: context.request).dictionary([.url, .args, .headers, .origin])
        var lines: [Data] = []
        for id in 0..<count {
            item["id"] = id
            guard let line = HTTPResponse.jsonLine(item) else { return .serverError }
            lines.append(line)
        }
        return HTTPResponse(status: 200, headers: [HTTPHeader("Content-Type", "application/json")]) { [lines] write in
            for line in lines {
                guard write(line) else { return .drop }
            }
            return .complete
        }
    }

    // MARK: /lines

    /// `count` lines (default 10) of `bytes` bytes each (default 32; ``TestServer/linesContent(line:bytes:)``
    /// says which), each ended by `line_end` (`lf`, the default, or `crlf`), sent in chunks of
    /// `piece` bytes (default 7) that deliberately straddle line ends.
    private static func lines(_ context: RouteContext) -> HTTPResponse {
        guard let countGiven = context.queryInteger("count", in: 0...10_000_000),
            let bytesGiven = context.queryInteger("bytes", in: 0...(1 << 24)),
            let pieceGiven = context.queryInteger("piece", in: 1...chunkSize)
        else {
            return badRequest("count (≤ 10000000), bytes (≤ 16777216) and piece (1-65536) must be whole numbers")
        }
        let lineEnds = ["lf": "\n", "crlf": "\r\n"]
        guard let lineEnd = lineEnds[context.query("line_end") ?? "lf"] else {
            return badRequest("line_end must be lf or crlf")
        }
        let (count, bytes, piece) = (countGiven ?? 10, bytesGiven ?? 32, pieceGiven ?? 7)
        guard count == 0 || TestServer.linesContent(line: count, bytes: bytes) != nil else {
            return badRequest("bytes is too small for line \(count): each line is {\"n\":K,\"pad\":\"…\"}")
        }
        let headers = [HTTPHeader("Content-Type", "application/x-ndjson")]
        return HTTPResponse(status: 200, headers: headers) { write in
            var pending = Data()
            for line in 0..<count {
                pending.append(Data((TestServer.linesContent(line: line + 1, bytes: bytes) ?? "").utf8))
                pending.append(Data(lineEnd.utf8))
                while pending.count >= piece {
                    guard write(pending.prefix(piece)) else { return .drop }
                    pending.removeFirst(piece)
                }
            }
            return write(pending) ? .complete : .drop
        }
    }
}
