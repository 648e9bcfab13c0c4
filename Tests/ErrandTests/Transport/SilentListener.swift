import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A TCP port on 127.0.0.1 that takes connections (the kernel completes them) and never says a
/// word: a proxy or server that hangs.
final class SilentListener: Sendable {
    let port: UInt16
    private let descriptor: Int32

    init() throws {
        (descriptor, port) = try Self.listeningSocket(backlog: 16)
    }

    /// A TCP socket listening on an ephemeral port of 127.0.0.1, and that port.
    static func listeningSocket(backlog: Int32) throws -> (descriptor: Int32, port: UInt16) {
        #if canImport(Glibc)
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && listen(descriptor, backlog) == 0
                    && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard bound else {
            close(descriptor)
            throw URLError(.cannotConnectToHost)
        }
        return (descriptor, UInt16(bigEndian: address.sin_port))
    }

    deinit {
        close(descriptor)
    }
}
