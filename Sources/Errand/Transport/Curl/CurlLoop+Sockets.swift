import CErrandCurl
import Foundation

/// The loop's WebSockets: connections libcurl opens and hands over, then read and written by
/// each ``CurlSocket`` as the loop finds them ready.
extension CurlLoop {
    func open(_ opening: CurlSocket.Opening) {
        guard !opening.mailbox.isClosed, let easy = takeHandle(for: opening.request.url, opening.mailbox) else {
            return
        }
        let resolveList: UnsafeMutableRawPointer?
        do throws(ErrandError) {
            resolveList = try configureSocket(easy, for: opening.request)
        } catch {
            recycle(easy)
            opening.mailbox.close(with: error, batch: drains)
            return
        }
        poolLimits.socketConnectionsChanged(by: 1)
        applyPoolLimits()
        guard add(easy, for: opening.request.url, opening.mailbox) else {
            poolLimits.socketConnectionsChanged(by: -1)
            applyPoolLimits()
            resolveList.map(errand_curl_slist_free_all)
            return
        }
        let socket = CurlSocket(
            opening, easy: easy, resolveList: resolveList,
            isCleartext: connection.isCleartext(toReach: opening.request.url))
        sockets[socket.id] = socket
        socketsByHandle[easy] = socket
        connectingSockets.insert(socket.id)
        deadlines.schedule(socket.id, at: socket.expiry)
    }

    /// Applies the pool's limits when what is open changed them.
    func applyPoolLimits() {
        guard let limits = poolLimits.takeChanges() else { return }
        _ = errand_curl_multi_setopt_long(multi, ERRAND_CURLMOPT_MAX_HOST_CONNECTIONS, limits.perHost)
        _ = errand_curl_multi_setopt_long(multi, ERRAND_CURLMOPT_MAXCONNECTS, limits.total)
    }

    /// The connection settings of a request, on a connection of its own that libcurl only opens:
    /// always HTTP/1.1 (a server offered h2 by ALPN would not take the upgrade), and through an
    /// HTTP proxy by CONNECT whatever the scheme.
    /// - Returns: The `CURLOPT_RESOLVE` list, which must live as long as the socket.
    func configureSocket(_ easy: UnsafeMutableRawPointer, for request: TransportRequest) throws(ErrandError)
        -> UnsafeMutableRawPointer?
    {
        let resolveList = try connection.configure(
            easy, toReach: request.url, isReplay: true,
            certificateBundle: certificateBundle.map(UnsafeRawBufferPointer.init))
        _ = errand_curl_easy_setopt_long(easy, ERRAND_CURLOPT_HTTP_VERSION, Int(ERRAND_CURL_HTTP_VERSION_1_1))
        _ = errand_curl_easy_setopt_long(easy, ERRAND_CURLOPT_HTTPPROXYTUNNEL, 1)
        _ = errand_curl_easy_setopt_long(easy, ERRAND_CURLOPT_CONNECT_ONLY, 1)
        _ = errand_curl_easy_setopt_long(easy, ERRAND_CURLOPT_NOSIGNAL, 1)
        return resolveList
    }

    func connected(_ socket: CurlSocket, result: Int32) {
        connectingSockets.remove(socket.id)
        if let error = CurlErrorMapping.error(for: result, url: socket.url) ?? socket.connected() {
            return end(socket, with: error)
        }
        if socket.canReleaseHandle, let easy = socket.easy {
            // The connection is the socket's own now: libcurl closes only its descriptor.
            socketsByHandle[easy] = nil
            _ = errand_curl_multi_remove_handle(multi, easy)
            socket.resolveList.map(errand_curl_slist_free_all)
            socket.releaseHandle()
            recycle(easy)
            poolLimits.socketConnectionsChanged(by: -1)
            applyPoolLimits()
        }
        queuePump(socket)
    }

    /// Has `socket` pumped this turn, once however often it is asked.
    func queuePump(_ socket: CurlSocket) {
        guard !socket.isQueuedForPump else { return }
        socket.isQueuedForPump = true
        pumpQueue.append(socket)
    }

    func pumpSockets() {
        swap(&pumpQueue, &pumping)
        defer { pumping.removeAll(keepingCapacity: true) }
        for socket in pumping where socket.isQueuedForPump {
            socket.isQueuedForPump = false
            // Ended since it was queued.
            guard sockets[socket.id] === socket else { continue }
            let state = socket.pump(batch: drains, buffer: &socketBuffer)
            if case .ended(let error) = state {
                end(socket, with: error)
                continue
            }
            // It read what one turn may: the rest waits for the next, after the timers and the others.
            if state == .busy { queuePump(socket) }
            // What it waits for may have changed: writes queued or sent, reading paused or resumed.
            if socketWatch?.update(socket) == false { end(socket, with: Self.unwatchable(socket)) }
        }
    }

    /// Why a socket the system would not watch ended: it could never be read again.
    static func unwatchable(_ socket: CurlSocket) -> ErrandError {
        let reason = "the system refused to watch the WebSocket's connection (\(String(cString: strerror(errno))))"
        return .transport(
            URLError(
                .cannotConnectToHost,
                userInfo: [NSURLErrorFailingURLErrorKey: socket.url, NSLocalizedDescriptionKey: reason]))
    }

    /// Drops `socket`'s connection and reports its end: `nil` for an orderly close by the peer.
    func end(_ socket: CurlSocket, with error: ErrandError?) {
        remove(socket, failingWritesWith: error ?? .transport(URLError(.networkConnectionLost)))
        socket.mailbox.close(with: error, batch: drains)
    }

    func remove(_ socket: CurlSocket, failingWritesWith error: ErrandError) {
        socket.failWrites(with: error)
        socketWatch?.forget(socket)
        if let easy = socket.easy {
            // Removing a connect-only handle from the multi handle closes its connection.
            _ = errand_curl_multi_remove_handle(multi, easy)
            socketsByHandle[easy] = nil
            socket.resolveList.map(errand_curl_slist_free_all)
            socket.releaseHandle()
            recycle(easy)
            poolLimits.socketConnectionsChanged(by: -1)
        }
        socket.closeOwnDescriptor()
        sockets[socket.id] = nil
        connectingSockets.remove(socket.id)
        deadlines.cancel(socket.id)
        socket.isQueuedForPump = false
        applyPoolLimits()
    }
}
