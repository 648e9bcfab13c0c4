import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The system calls the fault proxy makes, on non-blocking loopback TCP sockets.
enum ProxySocket {
    #if canImport(Glibc)
        private static let streamType = Int32(SOCK_STREAM.rawValue)
        private static let sendFlags = Int32(MSG_NOSIGNAL)
        private static let systemAccept = Glibc.accept
        private static let systemConnect = Glibc.connect
    #else
        private static let streamType = SOCK_STREAM
        private static let sendFlags: Int32 = 0
        private static let systemAccept = Darwin.accept
        private static let systemConnect = Darwin.connect
    #endif

    /// A listening socket on 127.0.0.1 and the port the kernel gave it.
    static func listener() throws -> (descriptor: Int32, port: UInt16) {
        let fd = socket(AF_INET, streamType, 0)
        guard fd >= 0 else { throw BenchmarkError(description: "socket(): errno \(errno)") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, SOMAXCONN) == 0 else {
            close(fd)
            throw BenchmarkError(description: "bind/listen on 127.0.0.1: errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        prepare(fd)
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    /// The next pending connection, non-blocking; `nil` when none is waiting.
    static func accept(_ listener: Int32) -> Int32? {
        let fd = systemAccept(listener, nil, nil)
        guard fd >= 0 else { return nil }
        prepare(fd)
        return fd
    }

    /// Starts connecting to 127.0.0.1:`port`; the socket becomes writable once connected.
    static func connect(port: UInt16) -> Int32? {
        let fd = socket(AF_INET, streamType, 0)
        guard fd >= 0 else { return nil }
        prepare(fd)
        var address = loopback(port: port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                systemConnect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 || errno == EINPROGRESS else {
            close(fd)
            return nil
        }
        return fd
    }

    /// Whether a connect started by ``connect(port:)`` failed, once the socket says it is done.
    static func connectFailed(_ fd: Int32) -> Bool {
        var failure: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        return getsockopt(fd, SOL_SOCKET, SO_ERROR, &failure, &length) != 0 || failure != 0
    }

    /// Reads what is there: bytes read, 0 at the peer's FIN, -1 when nothing is there yet, -2 on a reset or error.
    static func read(_ fd: Int32, into buffer: inout [UInt8]) -> Int {
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count >= 0 { return count }
            if errno == EINTR { continue }
            return errno == EAGAIN || errno == EWOULDBLOCK ? -1 : -2
        }
    }

    /// Writes what the socket takes of `bytes`: the count, -1 when its buffer is full, -2 when the peer is gone.
    static func write(_ fd: Int32, _ bytes: Data) -> Int {
        bytes.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Int in
            guard let base = raw.baseAddress else { return 0 }
            while true {
                let count = send(fd, base, raw.count, sendFlags)
                if count >= 0 { return count }
                if errno == EINTR { continue }
                return errno == EAGAIN || errno == EWOULDBLOCK ? -1 : -2
            }
        }
    }

    /// Sends a FIN: the peer reads the end of the stream, and may still send.
    static func finishWriting(_ fd: Int32) {
        shutdown(fd, Int32(SHUT_WR))
    }

    /// Closes `fd` with a TCP reset rather than a FIN.
    static func reset(_ fd: Int32) {
        var abort = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &abort, socklen_t(MemoryLayout<linger>.size))
        close(fd)
    }

    /// A pipe whose write end wakes the proxy's poll.
    static func wakePipe() throws -> (read: Int32, write: Int32) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw BenchmarkError(description: "pipe(): errno \(errno)") }
        prepare(ends[0])
        prepare(ends[1])
        return (ends[0], ends[1])
    }

    /// Non-blocking, not inherited by child processes, small writes sent at once.
    private static func prepare(_ fd: Int32) {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        var yes: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }
}
