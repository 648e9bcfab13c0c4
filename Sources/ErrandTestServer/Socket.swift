import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why a ``TestServer`` could not start.
public struct TestServerError: Error, Sendable, CustomStringConvertible {
    /// The failed call and the system's explanation, e.g. `bind(127.0.0.1:80): Permission denied (errno 13)`.
    public let description: String

    init(_ operation: String, errno code: Int32) {
        description = "\(operation): \(String(cString: strerror(code))) (errno \(code))"
    }
}

/// The few BSD socket calls the server makes, over plain file descriptors.
enum Socket {
    #if canImport(Glibc)
        private static let streamType = Int32(SOCK_STREAM.rawValue)
        // Linux has no SO_NOSIGPIPE; this flag keeps a send to a vanished peer from raising SIGPIPE.
        private static let sendFlags = Int32(MSG_NOSIGNAL)
    #else
        private static let streamType = SOCK_STREAM
        private static let sendFlags: Int32 = 0
    #endif

    /// Opens a listening TCP socket on `host` (an IPv4 loopback address) and returns it with the port actually bound.
    static func makeListener(host: String = "127.0.0.1", port: UInt16) throws -> (descriptor: Int32, port: UInt16) {
        let fd = try bound(host: host, port: port)
        var succeeded = false
        defer { if !succeeded { close(fd) } }
        guard listen(fd, SOMAXCONN) == 0 else { throw TestServerError("listen()", errno: errno) }

        var address = loopbackAddress(host: host, port: port)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw TestServerError("getsockname()", errno: errno) }
        succeeded = true
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    /// A TCP socket bound to `host`:`port`, not yet listening.
    private static func bound(host: String, port: UInt16) throws -> Int32 {
        let fd = socket(AF_INET, streamType, 0)
        guard fd >= 0 else { throw TestServerError("socket()", errno: errno) }
        setCloseOnExec(fd)
        // Lets a test restart on a fixed port while old connections sit in TIME_WAIT.
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = loopbackAddress(host: host, port: port)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            let error = TestServerError("bind(\(host):\(port))", errno: errno)
            close(fd)
            throw error
        }
        return fd
    }

    /// A socket bound to `host`:`port` that never listens, so that a stopped server's port
    /// refuses connections: while it is held, no other socket is given the port — not another
    /// server's listener, nor a client's ephemeral port, which on loopback could even connect to
    /// itself. `nil` when the port cannot be bound.
    static func makePlaceholder(host: String, port: UInt16) -> Int32? {
        try? bound(host: host, port: port)
    }

    /// Waits for the next connection. `nil` means accept(2) failed; `errno` says why.
    static func accept(from listener: Int32) -> (descriptor: Int32, peerAddress: String)? {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let fd = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                #if canImport(Glibc)
                    Glibc.accept(listener, $0, &length)
                #else
                    Darwin.accept(listener, $0, &length)
                #endif
            }
        }
        guard fd >= 0 else { return nil }
        setCloseOnExec(fd)
        #if canImport(Darwin)
            var yes: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &yes, socklen_t(MemoryLayout<Int32>.size))
        #endif
        // Small responses on a keep-alive connection must not wait for Nagle's delayed ACK dance.
        var noDelay: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        let host = UInt32(bigEndian: address.sin_addr.s_addr)
        let peer = "\(host >> 24).\(host >> 16 & 0xFF).\(host >> 8 & 0xFF).\(host & 0xFF)"
        return (fd, peer)
    }

    /// Reads what is available into `buffer`; 0 means the peer closed, a negative value an error.
    static func receive(_ fd: Int32, into buffer: inout [UInt8]) -> Int {
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            return count
        }
    }

    /// One send(2) of up to `count` bytes: how many went, or -1 with `errno` set.
    static func sendOnce(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
        send(fd, bytes, count, sendFlags)
    }

    /// Writes all of `data`; `false` when the peer is gone.
    static func sendAll(_ fd: Int32, _ data: Data) -> Bool {
        data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Bool in
            guard let base = bytes.baseAddress else { return true }
            var offset = 0
            while offset < bytes.count {
                let sent = send(fd, base + offset, bytes.count - offset, sendFlags)
                if sent < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += sent
            }
            return true
        }
    }

    /// Wakes any thread blocked in accept(2) or recv(2) on `fd`; close(2) alone does not.
    static func shutdownBoth(_ fd: Int32) {
        shutdown(fd, Int32(SHUT_RDWR))
    }

    /// Makes the next close(2) of `fd` abort the connection with a TCP reset instead of a FIN.
    static func resetOnClose(_ fd: Int32) {
        var abort = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &abort, socklen_t(MemoryLayout<linger>.size))
    }

    /// Ends our side and reads until the peer closes (at most about a second), so unread
    /// request bytes do not make the kernel answer with a reset that destroys our last response.
    static func finishWriting(_ fd: Int32) {
        shutdown(fd, Int32(SHUT_WR))
        var timeout = timeval()
        timeout.tv_sec = 1
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var scratch = [UInt8](repeating: 0, count: 16 * 1024)
        for _ in 0..<64 where receive(fd, into: &scratch) > 0 {}
    }

    /// Connects to the listener and hangs up at once: on Darwin, shutdown(2) does not wake a
    /// blocked accept(2), a new connection does. On Linux the connect is simply refused.
    static func poke(host: String = "127.0.0.1", port: UInt16) {
        let fd = socket(AF_INET, streamType, 0)
        guard fd >= 0 else { return }
        var address = loopbackAddress(host: host, port: port)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        close(fd)
    }

    private static func loopbackAddress(host: String, port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        #if canImport(Darwin)
            address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        if inet_pton(AF_INET, host, &address.sin_addr) != 1 { address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian }
        return address
    }

    // Test processes spawn helpers (curl, gunicorn); they must not inherit our sockets.
    private static func setCloseOnExec(_ fd: Int32) {
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
    }
}
