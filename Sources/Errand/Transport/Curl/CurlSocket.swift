import CErrandCurl
import Dispatch
import Foundation

/// A connection upgraded for a WebSocket, on the curl thread. libcurl connects it
/// (`CURLOPT_CONNECT_ONLY`: DNS, a proxy tunnel, TLS, HTTP/1.1 only); this then writes the
/// upgrade request, reads the answer (``HandshakeAnswerReader``), and moves bytes both ways
/// whenever the loop's poll finds the socket ready.
///
/// A connection without TLS becomes the socket's alone once connected: it takes a descriptor of
/// its own and libcurl lets go of the connection, so that nothing libcurl does with its pool —
/// closing idle connections after ``ConnectionOptions/idleConnectionTimeout``, or the oldest
/// when the pool is full — can close it, or hand its number to another connection. Over TLS
/// only libcurl holds the session: the first `curl_easy_send` makes the connection in use,
/// which libcurl then never closes while the socket lives.
///
/// What it reads reaches the consumer through the mailbox as a response does — the head, then
/// body chunks — so a consumer that falls behind pauses the reading as it pauses a download, and
/// TCP pushes back on the server. After a `101` the body is the peer's byte stream, ended by
/// `.completed(nil)` when the peer closes the connection; any other answer's body is read as it
/// is framed, up to ``HandshakeAnswerReader/bodyLimit``. `timeoutInterval` bounds the whole
/// handshake, a refusal's body included.
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
    enum State: Equatable {
        case alive
        /// It read all it may in one turn and may have more: the loop pumps it again next turn.
        case busy
        /// The connection ended: `nil` when the peer closed it after its head, else why.
        case ended(ErrandError?)
    }

    private enum Phase {
        /// Connecting, writing the upgrade request or reading the answer.
        case handshake
        case open
        /// Its owner's last write went out: what the peer still sends is read and dropped until
        /// it closes, so that the close frame reaches it rather than a reset that would drop it.
        case lingering
    }

    private struct Write {
        var bytes: Data
        var sent = 0
        let completion: @Sendable (ErrandError?) -> Void
    }

    /// How its owner asked it to end.
    private struct Ending {
        let error: ErrandError?
        /// When it ends whatever is left to write or to read.
        let deadline: DispatchTime
    }

    /// The size of the buffer the loop lends every socket to read into.
    static let readSize = 64 << 10
    /// The most bytes read in one turn: a peer that sends without pause still leaves the curl
    /// thread to its timers and its other transfers.
    static let readBudget = 4 * readSize

    let id: Int
    let mailbox: CurlEventMailbox
    let url: URL
    /// Where the answer's `Set-Cookie` fields are stored, by the URL the handshake went to.
    private let cookieJar: CookieJar?
    private let requestURL: URL
    /// The host overrides libcurl reads while connecting; freed with the handle.
    private(set) var resolveList: UnsafeMutableRawPointer?
    /// libcurl's handle of the connection; `nil` once the connection is the socket's alone.
    private(set) var easy: UnsafeMutableRawPointer?
    /// No TLS on the connection, to the server or a proxy: it becomes the socket's alone once
    /// connected, and its bytes go straight through its socket. libcurl 7.x walks every open
    /// connection to find this one on each send and receive: with a thousand sockets open, a
    /// third of the curl thread's time.
    private let isCleartext: Bool
    /// The socket to poll; -1 until connected.
    private(set) var descriptor: Int32 = -1
    /// Whether ``descriptor`` is the socket's own, which it closes, rather than libcurl's.
    private var ownsDescriptor = false
    /// Whether the loop queued it to pump this turn: it became ready, or has new writes, a
    /// resumed reader, or TLS data OpenSSL may hold with the socket itself quiet.
    var isQueuedForPump = false
    /// What the loop's ``CurlSocketWatch`` watches it for: 0 while unwatched.
    var watchedEvents: Int16 = 0
    private let handshakeDeadline: DispatchTime
    private var phase = Phase.handshake
    private var answer = HandshakeAnswerReader()
    private var writes: [Write] = []
    /// Bytes read that the mailbox declined: its consumer is behind.
    private var declined: Data?
    /// A refusal's body ended with some of it declined: the socket ends once that is delivered.
    private var endsAfterDeclined = false
    private var ending: Ending?

    init(_ opening: Opening, easy: UnsafeMutableRawPointer, resolveList: UnsafeMutableRawPointer?, isCleartext: Bool) {
        id = opening.id
        self.easy = easy
        self.resolveList = resolveList
        self.isCleartext = isCleartext
        mailbox = opening.mailbox
        // Errors name the address the app asked for, not the one libcurl was given.
        url = WebSocketURL.webSocket(opening.request.url)
        cookieJar = opening.request.cookieJar
        requestURL = opening.request.url
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

    /// When the socket must have given up: the handshake's deadline until the answer was read,
    /// and its end's once its owner asked for one.
    var expiry: DispatchTime? {
        let handshake = phase == .handshake ? handshakeDeadline : nil
        guard let ending else { return handshake }
        return min(handshake ?? ending.deadline, ending.deadline)
    }

    /// What the socket ends with once ``expiry`` passed.
    var expiredError: ErrandError? {
        phase == .handshake ? .timedOut : ending?.error
    }

    /// The events to poll the socket for; `nil` while connecting, when libcurl polls it.
    var pollEvents: Int16? {
        guard descriptor >= 0 else { return nil }
        var events: Int32 = declined == nil ? ERRAND_CURL_WAIT_POLLIN : 0
        if !writes.isEmpty { events |= ERRAND_CURL_WAIT_POLLOUT }
        return Int16(events)
    }

    /// libcurl finished connecting: the upgrade request can go out. A connection without TLS
    /// becomes the socket's own: the caller then lets libcurl's handle go (``releaseHandle()``),
    /// which closes only libcurl's descriptor.
    /// - Returns: Why the socket cannot go on, if it cannot.
    func connected() -> ErrandError? {
        guard let easy else { return nil }
        let libcurlDescriptor = errand_curl_easy_active_socket(easy)
        guard libcurlDescriptor >= 0 else { return Self.lost(url) }
        guard isCleartext else {
            descriptor = libcurlDescriptor
            return nil
        }
        let own = errand_socket_duplicate(libcurlDescriptor)
        guard own >= 0 else {
            let reason = "could not take the WebSocket's connection from libcurl (\(String(cString: strerror(errno))))"
            return .transport(
                URLError(
                    .cannotConnectToHost,
                    userInfo: [NSURLErrorFailingURLErrorKey: url, NSLocalizedDescriptionKey: reason]))
        }
        descriptor = own
        ownsDescriptor = true
        return nil
    }

    /// Whether libcurl still holds the connection (over TLS, or while connecting).
    var holdsLibcurlConnection: Bool { easy != nil }

    /// Whether the caller should let libcurl's handle go now: the connection is the socket's.
    var canReleaseHandle: Bool { ownsDescriptor && easy != nil }

    /// Forgets libcurl's handle and its host overrides, which the caller frees.
    func releaseHandle() {
        easy = nil
        resolveList = nil
    }

    /// Closes the socket's own descriptor, once it left the watch; libcurl closes its own.
    func closeOwnDescriptor() {
        guard ownsDescriptor, descriptor >= 0 else { return }
        errand_socket_close(descriptor)
        descriptor = -1
        ownsDescriptor = false
    }

    /// Queues `bytes`; `completion` runs on the curl thread once they all went out, so it must
    /// only hand the outcome on.
    func write(_ bytes: Data, completion: @escaping @Sendable (ErrandError?) -> Void) {
        guard ending == nil else { return completion(.cancelled) }
        writes.append(Write(bytes: bytes, completion: completion))
    }

    /// Ends the socket with `error` once the writes queued so far went out and the peer closed,
    /// or `seconds` from now at the latest. An earlier end's deadline stands when it is sooner.
    func end(afterWrites error: ErrandError?, within seconds: TimeInterval) {
        let deadline = DispatchTime.now() + CurlHop.timeout(seconds)
        if let ending, ending.deadline <= deadline { return }
        ending = Ending(error: ending?.error ?? error, deadline: deadline)
    }

    /// Sends what is queued and reads what is there, each until the socket would block or the
    /// turn's budget is spent; `buffer`, of ``readSize`` bytes, is the loop's, shared by its
    /// sockets: an idle socket holds no read buffer of its own.
    func pump(batch: CurlDrainBatch, buffer: inout [UInt8]) -> State {
        guard descriptor >= 0 else { return .alive }
        if case .ended(let error) = flush() { return .ended(ending?.error ?? error) }
        if let ending, writes.isEmpty, phase != .lingering {
            guard ending.deadline > .now() else { return .ended(ending.error) }
            phase = .lingering
            if ownsDescriptor { errand_socket_shutdown_writing(descriptor) }
        }
        let read = read(batch: batch, buffer: &buffer)
        if let ending, case .ended = read { return .ended(ending.error) }
        return read
    }

    /// Fails the writes still queued: the connection is gone.
    func failWrites(with error: ErrandError) {
        let pending = writes
        writes = []
        for write in pending { write.completion(error) }
    }

    private func flush() -> State {
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
            if declined == nil, endsAfterDeclined { return .ended(nil) }
        }
        var budget = Self.readBudget
        // Until CURLE_AGAIN: TLS may hold decrypted bytes that no poll would report.
        while declined == nil {
            guard budget > 0 else { return .busy }
            var count = 0
            let result = buffer.withUnsafeMutableBytes { receive(into: $0, received: &count) }
            if result == ERRAND_CURLE_AGAIN { return .alive }
            if let error = CurlErrorMapping.error(for: result, url: url) { return .ended(error) }
            guard count > 0 else { return endOfStream(batch: batch) }
            budget -= count
            let state = take(Data(buffer[..<count]), batch: batch)
            guard state == .alive else { return state }
        }
        return .alive
    }

    /// Sends what it can of `bytes` (a `CURLE_*` result).
    private func send(_ bytes: UnsafeRawBufferPointer, sent: inout Int) -> Int32 {
        guard !ownsDescriptor, let easy else {
            return errand_socket_send(descriptor, bytes.baseAddress, bytes.count, &sent)
        }
        return errand_curl_easy_send(easy, bytes.baseAddress, bytes.count, &sent)
    }

    /// Reads what is there into `buffer` (a `CURLE_*` result; 0 bytes when the peer closed).
    private func receive(into buffer: UnsafeMutableRawBufferPointer, received: inout Int) -> Int32 {
        guard !ownsDescriptor, let easy else {
            return errand_socket_recv(descriptor, buffer.baseAddress, buffer.count, &received)
        }
        return errand_curl_easy_recv(easy, buffer.baseAddress, buffer.count, &received)
    }

    /// The peer closed the connection.
    private func endOfStream(batch: CurlDrainBatch) -> State {
        guard phase == .handshake else { return .ended(nil) }
        do throws(HandshakeAnswerReader.Failure) {
            // A refusal's body may end with the connection; what came of it is kept.
            return post(try answer.takeEnd(), batch: batch) ?? .ended(Self.lost(url))
        } catch {
            return .ended(failure(error))
        }
    }

    private func take(_ bytes: Data, batch: CurlDrainBatch) -> State {
        switch phase {
        case .open: return deliver(bytes, batch: batch)
        case .lingering: return .alive
        case .handshake:
            do throws(HandshakeAnswerReader.Failure) {
                return post(try answer.take(bytes), batch: batch) ?? .alive
            } catch {
                return .ended(failure(error))
            }
        }
    }

    /// Posts what the answer's bytes came to; the state they leave the socket in, when they end it.
    private func post(_ events: [HandshakeAnswerReader.Event], batch: CurlDrainBatch) -> State? {
        for event in events {
            switch event {
            case .head(let statusCode, let headers):
                // A `101` sets cookies as any answer does (a load balancer's sticky one); stored
                // off the curl thread, as a jar saved to a file writes it, before the head is seen.
                let setCookies = answer.setCookieFields
                if !setCookies.isEmpty, let cookieJar {
                    mailbox.perform(batch: batch) { [requestURL] in
                        cookieJar.storeCookies(fromSetCookieFields: setCookies, for: requestURL)
                    }
                }
                mailbox.post(.responseHead(statusCode: statusCode, headers: headers), batch: batch)
                if statusCode == 101 { phase = .open }
            case .upgraded(let bytes), .body(let bytes):
                _ = deliver(bytes, batch: batch)
            case .ended:
                // What the consumer has not taken yet of the body goes first.
                guard declined == nil else {
                    endsAfterDeclined = true
                    return nil
                }
                return .ended(nil)
            }
        }
        return nil
    }

    private func failure(_ failure: HandshakeAnswerReader.Failure) -> ErrandError {
        switch failure {
        case .badServerResponse:
            .transport(URLError(.badServerResponse, userInfo: [NSURLErrorFailingURLErrorKey: url]))
        case .connectionLost: Self.lost(url)
        }
    }

    private static func lost(_ url: URL) -> ErrandError {
        .transport(URLError(.networkConnectionLost, userInfo: [NSURLErrorFailingURLErrorKey: url]))
    }

    /// Hands `bytes` to the consumer, or keeps them until it catches up.
    private func deliver(_ bytes: Data, batch: CurlDrainBatch) -> State {
        guard !bytes.isEmpty else { return .alive }
        // Behind what waits already, in order: a refusal's pieces come several to a read.
        if declined != nil {
            declined?.append(bytes)
            return .alive
        }
        if !mailbox.postBody(bytes, batch: batch) { declined = bytes }
        return .alive
    }
}
