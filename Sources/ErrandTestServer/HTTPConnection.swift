import Foundation

/// Serves one accepted connection on its own thread: read, parse, route, write, repeat while
/// keep-alive lasts. A blocked read costs only this thread, so a slow handler or an idle
/// keep-alive connection never holds up the others.
struct HTTPConnection: Sendable {
    let descriptor: Int32
    let peerAddress: String
    let server: ServerState
    let router: Router

    /// How writing a response went.
    private enum Delivery {
        case complete
        /// A streamed body stopped short of its `Content-Length` or a chunked one ended without its
        /// last chunk, or nothing was sent at all (``HTTPResponse/dropConnection``), on purpose:
        /// end the connection.
        case cutShort
        case peerGone
        /// A raw writer asked for the connection to end with a reset: close it without a FIN first.
        case reset
    }

    func run() {
        var parser = HTTPRequestParser(peerAddress: peerAddress, streamsBody: router.streamsBody)
        var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)
        var peerClosed = false

        serving: while true {
            var exchange: (request: HTTPRequest, response: HTTPResponse)?
            switch parser.next() {
            case .request(let request):
                exchange = (request, router.response(to: request, server: server))

            case .streamingRequest(let request):
                let body = RequestBodyReader(parser: parser, descriptor: descriptor)
                let response = router.response(to: request, server: server, body: body)
                body.drain()
                parser = body.parser
                switch body.outcome {
                case .failure(let status, let reason):
                    _ = send(HTTPResponse.text(reason + "\n", status: status), includeBody: true, keepAlive: false)
                    break serving
                case .peerGone, nil:
                    peerClosed = true
                    break serving
                case .complete:
                    exchange = (request, response)
                }

            case .incomplete:
                if parser.takeContinueRequest() && !Socket.sendAll(descriptor, HTTPResponse.continueResponse) {
                    peerClosed = true
                    break serving
                }
                let count = Socket.receive(descriptor, into: &readBuffer)
                // 0 is an orderly close, < 0 a reset or our own stop(); either way the client is
                // gone, possibly mid-request (a cancelled task), and there is no one to answer.
                guard count > 0 else {
                    peerClosed = true
                    break serving
                }
                parser.append(readBuffer[0..<count])

            case .failure(let status, let reason):
                _ = send(HTTPResponse.text(reason + "\n", status: status), includeBody: true, keepAlive: false)
                break serving
            }

            guard let (request, response) = exchange else { continue }
            // HTTP/1.0 has no chunked coding: a body of unknown length reaches such a client
            // unframed, and only the close tells it where the body ends.
            let chunkedAllowed = request.version != "HTTP/1.0"
            let keepAlive =
                request.wantsKeepAlive && !response.closesConnection && !server.isStopped
                && (chunkedAllowed || response.contentLength != nil)
            switch send(
                response, includeBody: request.method != "HEAD", keepAlive: keepAlive, chunkedAllowed: chunkedAllowed)
            {
            case .complete where keepAlive: continue
            case .complete, .cutShort: break serving
            case .peerGone, .reset:
                peerClosed = true
                break serving
            }
        }
        if !peerClosed && !server.isStopped {
            Socket.finishWriting(descriptor)
        }
        server.closeConnection(descriptor)
    }

    /// Writes the head and body; a small body goes out with the head in one send, a streamed
    /// one chunk by chunk as its producer makes it.
    private func send(
        _ response: HTTPResponse, includeBody: Bool, keepAlive: Bool, chunkedAllowed: Bool = true
    ) -> Delivery {
        guard !response.dropsConnection else { return .cutShort }
        if let writer = response.rawWriter {
            switch writer(RawConnection(descriptor: descriptor, server: server)) {
            case .close: return .cutShort
            case .reset:
                // A zero linger makes close(2) send RST at once; shutting down first would send FIN.
                Socket.resetOnClose(descriptor)
                return .reset
            }
        }
        var wire = response.head(keepAlive: keepAlive, chunkedAllowed: chunkedAllowed)
        guard includeBody && response.allowsBody else {
            return Socket.sendAll(descriptor, wire) ? .complete : .peerGone
        }
        switch response.body {
        case .data(let data):
            wire.append(data)
            return Socket.sendAll(descriptor, wire) ? .complete : .peerGone

        case .stream(let length, let producer):
            guard Socket.sendAll(descriptor, wire) else { return .peerGone }
            var sent = 0
            var delivered = true
            producer { chunk in
                // Never more than announced: extra bytes would be read as the next response.
                let allowed = chunk.prefix(length - sent)
                delivered = delivered && Socket.sendAll(descriptor, allowed)
                sent += allowed.count
                return delivered && !server.isStopped
            }
            guard delivered else { return .peerGone }
            return sent == length ? .complete : .cutShort

        case .chunked(let producer):
            guard Socket.sendAll(descriptor, wire) else { return .peerGone }
            var delivered = true
            let ending = producer { chunk in
                guard delivered && !server.isStopped else { return false }
                // An empty chunk would end the body; there is nothing to send anyway.
                guard !chunk.isEmpty else { return true }
                // Size line, bytes and CRLF in one send: with Nagle off, one segment per chunk.
                let framed =
                    chunkedAllowed
                    ? Data((String(chunk.count, radix: 16) + "\r\n").utf8) + chunk + Data("\r\n".utf8) : chunk
                delivered = Socket.sendAll(descriptor, framed)
                return delivered
            }
            guard delivered else { return .peerGone }
            guard ending == .complete, !server.isStopped else { return .cutShort }
            guard chunkedAllowed else { return .complete }
            return Socket.sendAll(descriptor, Data("0\r\n\r\n".utf8)) ? .complete : .peerGone
        }
    }
}
