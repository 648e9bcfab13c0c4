import CErrandCurl
import Dispatch
import Foundation

/// A connection upgraded for a WebSocket, on the curl thread. libcurl connects it
/// (`CURLOPT_CONNECT_ONLY`: DNS, a proxy tunnel, TLS, HTTP/1.1 only); this then writes the
/// upgrade request, reads the answer's head, and moves bytes both ways whenever the loop's poll
/// finds the socket ready: with `curl_easy_send` and `curl_easy_recv` over TLS, and straight on
/// the socket without (see ``isCleartext``).
///
/// What it reads reaches the consumer through the mailbox as a response does — the head, then
/// body chunks — so a consumer that falls behind pauses the reading as it pauses a download, and
/// TCP pushes back on the server. After a `101` the body is the peer's byte stream, ended by
/// `.completed(nil)` when the peer closes the connection; any other answer's body is kept up to
/// ``refusalBodyLimit`` bytes.
final class CurlSocket {
    /// What the curl thread needs to open one.
    struct Opening: Sendable {
        let id: Int
        let request: TransportRequest
        /// The upgrade request as it goes on the wire.
        let head: Data
        let mailbox: CurlEventMailbox
        /// When the handshake must have been answered: `timeoutInterval` bounds it, not the open socket.
        let handshakeDeadline: DispatchTime
    }

    /// What a pump of the socket left it as.
    enum State {
        case alive
        /// The connection ended: `nil` when the peer closed it after its head, else why.
        case ended(ErrandError?)
    }

    private enum Phase {
        case connecting
        case readingHead
        case open
        /// A refused handshake's body: the bytes still to keep, until then or until the peer closes.
        case refusalBody(remaining: Int)
    }

    private struct Write {
        var bytes: Data
        var sent = 0
        let completion: @Sendable (ErrandError?) -> Void
    }

    /// The most of a refused handshake's body that is kept.
    static let refusalBodyLimit = 64 << 10
    /// The longest head read before the answer is refused as malformed.
    private static let headLimit = 64 << 10
    /// The size of the buffer the loop lends every socket to read into.
    static let readSize = 64 << 10

    let id: Int
    let easy: UnsafeMutableRawPointer
    let mailbox: CurlEventMailbox
    let url: URL
    /// The host overrides libcurl reads while connecting; freed with the socket.
    let resolveList: UnsafeMutableRawPointer?
    /// No TLS on the connection, to the server or a proxy: its bytes go straight through the
    /// socket. libcurl 7.x walks every open connection to find this one on each send and
    /// receive: with a thousand sockets open, a third of the curl thread's time.
    private let isCleartext: Bool
    /// The socket to poll; -1 until connected.
    private(set) var descriptor: Int32 = -1
    /// Whether the loop queued it to pump this turn: it became ready, or has new writes, a
    /// resumed reader, or TLS data OpenSSL may hold with the socket itself quiet.
    var isQueuedForPump = false
    /// What the loop's ``CurlSocketWatch`` watches it for: 0 while unwatched.
    var watchedEvents: Int16 = 0
    private let handshakeDeadline: DispatchTime
    private var phase = Phase.connecting
    private var head = CurlResponseHead()
    private var headBuffer = Data()
    private var writes: [Write] = []
    /// Bytes read that the mailbox declined: its consumer is behind.
    private var declined: Data?
    /// How the socket ends once its writes went out, when its owner dropped it: whatever the
    /// peer does meanwhile (a peer answering a close frame closes the connection at once).
    private var pendingEnd: ErrandError??

    init(_ opening: Opening, easy: UnsafeMutableRawPointer, resolveList: UnsafeMutableRawPointer?, isCleartext: Bool) {
        id = opening.id
        self.easy = easy
        self.resolveList = resolveList
        self.isCleartext = isCleartext
        mailbox = opening.mailbox
        // Errors name the address the app asked for, not the one libcurl was given.
        url = WebSocketURL.webSocket(opening.request.url)
        handshakeDeadline = opening.handshakeDeadline
        writes = [Write(bytes: opening.head) { _ in }]
    }

    /// `request` as an HTTP/1.1 head, as the socket writes it: the request target, `Host`, the
    /// request's fields and the cookies for its URL.
    static func head(of request: TransportRequest, cookieHeader: String?) -> Data {
        let url = UnixSocketURL(request.url)?.httpURL ?? request.url
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        var target = components?.percentEncodedPath ?? "/"
        if target.isEmpty { target = "/" }
        if let query = components?.percentEncodedQuery { target += "?" + query }
        var lines = ["\(request.method) \(target) HTTP/1.1"]
        if request.headers.headerField("Host") == nil, let host = components?.percentEncodedHost {
            let hostText = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
            lines.append("Host: " + hostText + (components?.port.map { ":\($0)" } ?? ""))
        }
        lines += request.headers.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
        if let cookieHeader, request.headers.headerField("Cookie") == nil { lines.append("Cookie: \(cookieHeader)") }
        return Data((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
    }

    /// When the socket must have given up waiting: the handshake's deadline, until its head arrived.
    var expiry: DispatchTime? {
        switch phase {
        case .connecting, .readingHead: handshakeDeadline
        case .open, .refusalBody: nil
        }
    }

    /// The events to poll the socket for; `nil` while connecting, when libcurl polls it.
    var pollEvents: Int16? {
        guard descriptor >= 0 else { return nil }
        var events: Int32 = declined == nil ? ERRAND_CURL_WAIT_POLLIN : 0
        if !writes.isEmpty { events |= ERRAND_CURL_WAIT_POLLOUT }
        return Int16(events)
    }

    /// libcurl finished connecting: the upgrade request can go out.
    func connected() {
        descriptor = errand_curl_easy_active_socket(easy)
        phase = .readingHead
    }

    /// Queues `bytes`; `completion` runs on the curl thread once libcurl took the last of them,
    /// so it must only hand the outcome on.
    func write(_ bytes: Data, completion: @escaping @Sendable (ErrandError?) -> Void) {
        writes.append(Write(bytes: bytes, completion: completion))
    }

    /// Ends the socket with `error` once the writes queued so far went out.
    func end(afterWrites error: ErrandError?) {
        pendingEnd = .some(error)
    }

    /// Sends what is queued and reads what is there, each until the socket would block;
    /// `buffer`, of ``readSize`` bytes, is the loop's, shared by its sockets: an idle socket
    /// holds no read buffer of its own.
    func pump(batch: CurlDrainBatch, buffer: inout [UInt8]) -> State {
        guard descriptor >= 0 else { return .alive }
        let state = flush(batch: batch)
        if let pendingEnd, writes.isEmpty || isEnded(state) { return .ended(pendingEnd) }
        if case .ended = state { return state }
        let read = read(batch: batch, buffer: &buffer)
        if let pendingEnd, isEnded(read) { return .ended(pendingEnd) }
        return read
    }

    private func isEnded(_ state: State) -> Bool {
        if case .ended = state { return true }
        return false
    }

    /// Fails the writes still queued: the connection is gone.
    func failWrites(with error: ErrandError) {
        let pending = writes
        writes = []
        for write in pending { write.completion(error) }
    }

    private func flush(batch: CurlDrainBatch) -> State {
        while !writes.isEmpty {
            var sent = 0
            let result = writes[0].bytes.withUnsafeBytes { bytes in
                send(UnsafeRawBufferPointer(rebasing: bytes[writes[0].sent...]), sent: &sent)
            }
            if result == ERRAND_CURLE_AGAIN { return .alive }
            if let error = CurlErrorMapping.error(for: result, url: url) { return .ended(error) }
            writes[0].sent += sent
            guard writes[0].sent == writes[0].bytes.count else { continue }
            writes.removeFirst().completion(nil)
        }
        return .alive
    }

    private func read(batch: CurlDrainBatch, buffer: inout [UInt8]) -> State {
        if let bytes = declined {
            // Counted when first taken: only the delivery is left to do.
            declined = nil
            _ = deliver(bytes, batch: batch)
        }
        // Until CURLE_AGAIN: TLS may hold decrypted bytes that no poll would report.
        while declined == nil {
            var count = 0
            let result = buffer.withUnsafeMutableBytes { receive(into: $0, received: &count) }
            if result == ERRAND_CURLE_AGAIN { return .alive }
            if let error = CurlErrorMapping.error(for: result, url: url) { return .ended(error) }
            guard count > 0 else { return endOfStream() }
            if case .ended(let error) = take(Data(buffer[..<count]), batch: batch) { return .ended(error) }
        }
        return .alive
    }

    /// Sends what it can of `bytes` (a `CURLE_*` result).
    private func send(_ bytes: UnsafeRawBufferPointer, sent: inout Int) -> Int32 {
        isCleartext
            ? errand_socket_send(descriptor, bytes.baseAddress, bytes.count, &sent)
            : errand_curl_easy_send(easy, bytes.baseAddress, bytes.count, &sent)
    }

    /// Reads what is there into `buffer` (a `CURLE_*` result; 0 bytes when the peer closed).
    private func receive(into buffer: UnsafeMutableRawBufferPointer, received: inout Int) -> Int32 {
        isCleartext
            ? errand_socket_recv(descriptor, buffer.baseAddress, buffer.count, &received)
            : errand_curl_easy_recv(easy, buffer.baseAddress, buffer.count, &received)
    }

    /// The peer closed the connection.
    private func endOfStream() -> State {
        switch phase {
        // A refused handshake's body may end with the connection; what came of it is kept.
        case .open, .refusalBody: .ended(nil)
        case .connecting, .readingHead:
            .ended(.transport(URLError(.networkConnectionLost, userInfo: [NSURLErrorFailingURLErrorKey: url])))
        }
    }

    private func take(_ bytes: Data, batch: CurlDrainBatch) -> State {
        switch phase {
        case .connecting, .readingHead:
            return takeHead(bytes, batch: batch)
        case .open:
            return deliver(bytes, batch: batch)
        case .refusalBody(let remaining):
            let kept = bytes.prefix(remaining)
            let state = deliver(kept, batch: batch)
            phase = .refusalBody(remaining: remaining - kept.count)
            return remaining == kept.count ? .ended(nil) : state
        }
    }

    /// Reads the answer's head line by line; what follows it is the body.
    private func takeHead(_ bytes: Data, batch: CurlDrainBatch) -> State {
        headBuffer.append(bytes)
        while let lineEnd = headBuffer.firstIndex(of: 0x0A) {
            let line = headBuffer[headBuffer.startIndex...lineEnd]
            let outcome = line.withUnsafeBytes { head.take($0) }
            headBuffer = Data(headBuffer[(lineEnd + 1)...])
            guard case .complete = outcome else { continue }
            return headEnded(batch: batch)
        }
        guard headBuffer.count <= Self.headLimit else {
            return .ended(.transport(URLError(.badServerResponse, userInfo: [NSURLErrorFailingURLErrorKey: url])))
        }
        return .alive
    }

    private func headEnded(batch: CurlDrainBatch) -> State {
        let statusCode = head.statusCode
        guard statusCode > 0 else {
            return .ended(.transport(URLError(.badServerResponse, userInfo: [NSURLErrorFailingURLErrorKey: url])))
        }
        let headers = head.headers
        mailbox.post(.responseHead(statusCode: statusCode, headers: headers), batch: batch)
        if statusCode == 101 {
            phase = .open
        } else {
            let length = headers.headerField("Content-Length").flatMap { Int($0.trimmed) }
            let remaining = min(max(length ?? Self.refusalBodyLimit, 0), Self.refusalBodyLimit)
            phase = .refusalBody(remaining: remaining)
            if remaining == 0 { return .ended(nil) }
        }
        let rest = headBuffer
        headBuffer = Data()
        return rest.isEmpty ? .alive : take(rest, batch: batch)
    }

    /// Hands `bytes` to the consumer, or keeps them until it catches up.
    private func deliver(_ bytes: Data, batch: CurlDrainBatch) -> State {
        guard !bytes.isEmpty else { return .alive }
        if !mailbox.postBody(bytes, batch: batch) { declined = bytes }
        return .alive
    }
}
