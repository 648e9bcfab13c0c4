import ErrandScenarios
import ErrandTestServer
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A plain HTTP/1.1 client over a socket, for what URLSession hides: exact bytes received
/// before a drop, pipelining, and raw framing.
final class RawHTTP: Sendable {
    struct Response: Sendable {
        var status: Int
        /// Lower-cased names.
        var headers: [String: String]
        var body: Data
    }

    private let descriptor: Int32

    init(port: UInt16) throws {
        #if canImport(Glibc)
            descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        // A stuck test fails after 10 seconds instead of hanging the suite.
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        // `deinit` closes the descriptor, also when this throws.
        guard connected == 0 else { throw URLError(.cannotConnectToHost) }
    }

    deinit {
        close(descriptor)
    }

    func send(_ data: Data) throws {
        let sent = data.withUnsafeBytes { Foundation.send(descriptor, $0.baseAddress, $0.count, 0) }
        guard sent == data.count else { throw URLError(.networkConnectionLost) }
    }

    /// The next bytes, or `nil` once the server has closed the connection.
    func receive() -> Data? {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        return count > 0 ? Data(buffer[0..<count]) : nil
    }

    /// Sends `request`, reads until the server closes, and splits off the first head. With
    /// `wholeStream`, `body` is everything after that head, later responses included.
    static func exchange(port: UInt16, _ request: Data, wholeStream: Bool = false) async throws -> Response {
        try await onOwnThread { try exchangeBlocking(port: port, request, wholeStream: wholeStream) }
    }

    private static func exchangeBlocking(port: UInt16, _ request: Data, wholeStream: Bool) throws -> Response {
        let connection = try RawHTTP(port: port)
        try connection.send(request)
        var received = Data()
        while let chunk = connection.receive() { received.append(chunk) }
        guard let headEnd = received.range(of: Data("\r\n\r\n".utf8)) else { throw URLError(.badServerResponse) }
        let lines = String(decoding: received[..<headEnd.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let status = Int(lines.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        var body = Data(received[headEnd.upperBound...])
        if !wholeStream, let length = headers["content-length"].flatMap({ Int($0) }), body.count > length {
            body = body.prefix(length)
        }
        return Response(status: status, headers: headers, body: body)
    }

    static func get(_ server: TestServer, _ target: String, headers: [String] = []) async throws -> Response {
        try await request(server, "GET", target, headers: headers)
    }

    /// One request on a connection of its own; a body gets its `Content-Length`.
    static func request(
        _ server: TestServer, _ method: String, _ target: String, headers: [String] = [], body: Data = Data()
    ) async throws -> Response {
        var head = ["\(method) \(target) HTTP/1.1", "Host: 127.0.0.1", "Connection: close"] + headers
        if !body.isEmpty { head.append("Content-Length: \(body.count)") }
        return try await exchange(port: server.port, Data((head.joined(separator: "\r\n") + "\r\n\r\n").utf8) + body)
    }
}
