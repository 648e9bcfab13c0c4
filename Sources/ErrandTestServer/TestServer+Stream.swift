import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Control and content of the streaming endpoints. Their bodies are chunked, each write its own
/// chunk sent at once, so a client sees every event as soon as the server writes it.
///
/// - `GET /sse/events?count=N&interval=MS&retry=MS&drop=1&event=NAME&status=CODE&content_type=TYPE&timestamp=1`:
///   `Content-Type: text/event-stream` (or TYPE), `Cache-Control: no-cache`. With `retry`, a first
///   chunk `retry: MS\n\n`; then N events (default 3), each one chunk `id: K\nevent: NAME\ndata:
///   {"n":K}\n\n` (NAME defaults to `tick`), MS milliseconds apart (`interval`, default 0), K counting
///   from the request's `Last-Event-ID` + 1 (from 1 without one, or when it is not a whole number).
///   Then the last, empty chunk; with `drop=1` the connection closes without it instead, as a
///   dropped stream does. `status=204` answers 204 without a body, another status (up to 599) that
///   status with a short text body. Each request's `Last-Event-ID` is recorded: ``lastEventIDs(path:)``.
///   With `timestamp=1` each event's data is `{"n":K,"t":NS}`, NS being ``monotonicNanoseconds()``
///   just before its chunk is sent: a client in any process on the machine can tell how long it took.
/// - `GET /sse/endless?size=BYTES`: `data: {"n":K}\n\n` for K = 1, 2, … in 64 KiB chunks, as fast as
///   the client reads, made as they are sent (a gigabyte costs the server one chunk): until the
///   client hangs up or the server stops, or exactly BYTES bytes, the last event cut where they end.
/// - `GET /sse/long-line?bytes=N`: `data: `, N bytes of `x` (default 1 MiB) in 64 KiB chunks, `\n\n`.
/// - `GET /stream/{n}`: httpbin's: min(n, 100) lines of `/get`'s JSON plus `"id": i` (from 0),
///   `application/json`, a chunk each; compact, keys sorted (httpbin's bytes differ, its JSON does not).
/// - `GET /lines?count=N&bytes=B&line_end=lf|crlf&piece=P`: N lines (default 10) of B bytes (default
///   32; ``linesContent(line:bytes:)``), each ended by LF (default) or CRLF, in P-byte chunks
///   (default 7) that straddle the line ends, for line splitting. `application/x-ndjson`.
/// - `POST /v1/chat/completions`: OpenAI's chat completions, streamed or not; see ``ChatCompletionRoutes``.
///   With ``chatCompletionsAPIKey`` set, only `Authorization: Bearer <key>` is let in.
///
/// A streamed upload of any size, chunked or not, is what `POST /upload` already reads: it keeps
/// only the byte count and ``Checksum``.
extension TestServer {
    /// The `Last-Event-ID` each request whose path starts with `prefix` sent, oldest first, `nil`
    /// where it sent none: what an event source's reconnects asked to resume from.
    public func lastEventIDs(path prefix: String = "/sse/") -> [String?] {
        receivedRequests(path: prefix).map { $0.header("Last-Event-ID") }
    }

    /// When set, `/v1/chat/completions` answers 401 (OpenAI's `invalid_api_key` error) unless the
    /// request carries `Authorization: Bearer <key>`. `nil`, the default, lets everyone in.
    public var chatCompletionsAPIKey: String? {
        get { state.chat.apiKey }
        set { state.chat.apiKey = newValue }
    }

    /// Nanoseconds on `CLOCK_MONOTONIC`, which on Linux (and on Darwin) is one clock for every
    /// process of the machine, so that a time the server wrote into an event can be compared with
    /// the client's reading of the same clock, even with the server in another process.
    public static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// Line `line` (from 1) of what `/lines?bytes=` sends, without its line end: `{"n":line,"pad":"x…"}`
    /// padded with `x` to exactly `bytes` bytes; `nil` when `bytes` is too small for it.
    public static func linesContent(line: Int, bytes: Int) -> String? {
        let bare = #"{"n":\#(line),"pad":""}"#
        guard bytes >= bare.utf8.count else { return nil }
        return #"{"n":\#(line),"pad":"\#(String(repeating: "x", count: bytes - bare.utf8.count))"}"#
    }
}
