import Foundation

/// Serves one accepted connection on its own thread: read, parse, route, write, repeat while
/// keep-alive lasts. A blocked read costs only this thread, so a slow handler or an idle
/// keep-alive connection never holds up the others.
struct HTTPConnection: Sendable {
    let descriptor: Int32
    let peerAddress: String
    let server: ServerState
    let router: Router

    func run() {
        var parser = HTTPRequestParser(peerAddress: peerAddress)
        var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)
        var peerClosed = false

        serving: while true {
            switch parser.next() {
            case .request(let request):
                let response = router.response(to: request, server: server)
                let keepAlive = request.wantsKeepAlive && !response.closesConnection && !server.isStopped
                let wire = response.serialized(includeBody: request.method != "HEAD", keepAlive: keepAlive)
                guard Socket.sendAll(descriptor, wire) else {
                    peerClosed = true
                    break serving
                }
                if !keepAlive { break serving }

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
                let response = HTTPResponse.text(reason + "\n", status: status)
                _ = Socket.sendAll(descriptor, response.serialized(includeBody: true, keepAlive: false))
                break serving
            }
        }
        if !peerClosed && !server.isStopped {
            Socket.finishWriting(descriptor)
        }
        server.closeConnection(descriptor)
    }
}
