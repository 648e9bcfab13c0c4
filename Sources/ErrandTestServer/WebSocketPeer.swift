import Errand
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The server's side of an open WebSocket: reads the client's masked frames and answers as its
/// ``Script`` says. Checks what a server must (frames masked, control frames short and whole)
/// and closes with 1002 otherwise.
struct WebSocketPeer {
    /// What the server does besides echoing.
    struct Script: Sendable {
        var greetings = 0
        var closeCode: UInt16?
        var closeReason = ""
        var dropsAfterFirstMessage = false
        /// Bytes put before each echoed message: the connection's label, for a client to check
        /// which connection a message went out on.
        var echoTag: [UInt8] = []
        var answersPings = true
        /// Answers each ping it does not answer with an empty pong, which answers no ping with a
        /// payload, then a text message `stray pong`.
        var sendsStrayPongs = false
        /// Whether permessage-deflate was agreed: messages are compressed both ways.
        var compresses = false
        /// Sends a masked frame first, which a server must never do.
        var sendsMaskedFrame = false
        /// Sends one binary message of this many bytes (``TestServer/repeatingPattern(size:)``), written 4 KiB at a time.
        var trickledSize: Int?
        /// Sends this many binary messages of `size` bytes as fast as the client takes them,
        /// noting in ``WebSocketFloodState`` when the client first stopped taking more.
        var flood: (count: Int, size: Int)?
        /// Sends `count` text messages of 64 bytes, `milliseconds` apart, before echoing.
        var ticks: (count: Int, milliseconds: Int)?
    }

    let connection: RawConnection
    let script: Script
    private var buffer: [UInt8] = []
    /// The server's side of permessage-deflate: its own compressor is the "client" one of the
    /// parameters, which name the sides from the client's point of view.
    private let inflater: PerMessageInflater?
    private let deflater: PerMessageDeflater?

    init(connection: RawConnection, script: Script) {
        self.connection = connection
        self.script = script
        inflater = script.compresses ? PerMessageInflater(PerMessageDeflateParameters()) : nil
        deflater = script.compresses ? PerMessageDeflater(PerMessageDeflateParameters()) : nil
    }

    /// The `Sec-WebSocket-Accept` for a client's key.
    static func acceptValue(for key: String) -> String {
        Data(SHA1.digest(Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8))).base64EncodedString()
    }

    /// Runs the script, then echoes until the client closes or goes away.
    mutating func run() {
        for number in 0..<script.greetings {
            guard send(opcode: 0x1, Array("message \(number + 1)".utf8)) else { return }
        }
        if script.sendsMaskedFrame {
            // FIN, text, masked, 6 bytes, a zero key: "masked" readable as it is.
            guard connection.write(Data([0x81, 0x86, 0, 0, 0, 0] + Array("masked".utf8))) else { return }
        }
        if let size = script.trickledSize {
            let payload = TestServer.repeatingPattern(size: size)
            guard connection.write(Self.header(opcode: 0x2, length: size)) else { return }
            for start in stride(from: 0, to: size, by: 4096) {
                guard connection.write(payload[start..<min(start + 4096, size)]) else { return }
            }
        }
        if let (count, milliseconds) = script.ticks {
            for number in 0..<count {
                let text = "tick \(number + 1)".padding(toLength: 64, withPad: ".", startingAt: 0)
                guard send(opcode: 0x1, Array(text.utf8)) else { return }
                connection.sleep(seconds: Double(milliseconds) / 1000)
            }
        }
        if let (count, size) = script.flood {
            guard flood(count: count, frame: floodFrame(size: size)) else { return }
            guard send(opcode: 0x1, Array("flood done".utf8)) else { return }
        }
        if let code = script.closeCode {
            guard send(opcode: 0x8, Self.closePayload(code, script.closeReason)) else { return }
            // The client's close frame answers it; anything before it is read and dropped.
            while let frame = readFrame() {
                guard frame.opcode == 0x8 else { continue }
                connection.server.webSocketCloses.note(
                    frame.payload.count >= 2 ? UInt16(frame.payload[0]) << 8 | UInt16(frame.payload[1]) : nil)
                break
            }
            return
        }
        while let message = nextMessage() {
            if script.dropsAfterFirstMessage { return }
            guard send(opcode: message.opcode, script.echoTag + message.payload) else { return }
        }
    }

    /// The client's next whole message, decompressed, its opcode 1 (text) or 2 (binary). Pings
    /// are answered on the way (unless the script says not to) and a close frame with one of
    /// the same code; `nil` then, once the client is gone, or after a violation, answered 1002.
    mutating func nextMessage() -> (opcode: UInt8, payload: [UInt8])? {
        var message: (opcode: UInt8, isCompressed: Bool, payload: [UInt8])?
        while let frame = readFrame() {
            switch frame.opcode {
            case 0x8:
                connection.server.webSocketCloses.note(
                    frame.payload.count >= 2 ? UInt16(frame.payload[0]) << 8 | UInt16(frame.payload[1]) : nil)
                _ = send(opcode: 0x8, Array(frame.payload.prefix(2)))
                return nil
            case 0x9:
                if script.answersPings, !send(opcode: 0xA, frame.payload) { return nil }
                if !script.answersPings, script.sendsStrayPongs {
                    guard send(opcode: 0xA, []), send(opcode: 0x1, Array("stray pong".utf8)) else { return nil }
                }
            case 0xA:
                continue
            case 0x0:
                guard message != nil else {
                    protocolError()
                    return nil
                }
                message?.payload += frame.payload
            default:
                guard message == nil else {
                    protocolError()
                    return nil
                }
                message = (frame.opcode, frame.isCompressed, frame.payload)
            }
            guard frame.isFinal, frame.opcode < 0x8, let whole = message else { continue }
            guard whole.isCompressed else { return (whole.opcode, whole.payload) }
            guard let inflated = try? inflater?.inflate(Data(whole.payload), limit: 64 << 20) else {
                protocolError()
                return nil
            }
            return (whole.opcode, Array(inflated))
        }
        return nil
    }

    /// Sends `frame` `count` times, as many frames to a write as fill 64 KiB, as a server's
    /// buffered writer would: with a `send(2)` per frame the server, not the client, would set the
    /// pace. The first write that waits a second for the client notes how many bytes went before
    /// it. `false` once the client is gone.
    private func flood(count: Int, frame: Data) -> Bool {
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(
            connection.descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        defer {
            var none = timeval(tv_sec: 0, tv_usec: 0)
            setsockopt(connection.descriptor, SOL_SOCKET, SO_SNDTIMEO, &none, socklen_t(MemoryLayout<timeval>.size))
        }
        let framesPerWrite = max(1, (64 << 10) / max(frame.count, 1))
        let fullWrite = Data(repeatElement(frame, count: framesPerWrite).joined())
        var progress = (sent: 0, hasBlocked: false)
        var remaining = count
        while remaining > 0 {
            let frames = min(remaining, framesPerWrite)
            guard write(fullWrite.prefix(frames * frame.count), progress: &progress) else { return false }
            remaining -= frames
        }
        if !progress.hasBlocked { connection.server.webSocketFlood.note(blockedAfter: nil) }
        return true
    }

    /// Writes all of `bytes`, waiting as the socket says; notes the bytes sent before the first wait.
    private func write(_ bytes: Data, progress: inout (sent: Int, hasBlocked: Bool)) -> Bool {
        bytes.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Bool in
            guard let base = bytes.baseAddress else { return true }
            var offset = 0
            while offset < bytes.count, !connection.server.isStopped {
                let written = Socket.sendOnce(connection.descriptor, base + offset, bytes.count - offset)
                if written > 0 {
                    offset += written
                    progress.sent += written
                } else if errno == EAGAIN || errno == EWOULDBLOCK {
                    if !progress.hasBlocked { connection.server.webSocketFlood.note(blockedAfter: progress.sent) }
                    progress.hasBlocked = true
                } else if errno != EINTR {
                    return false
                }
            }
            return offset == bytes.count
        }
    }

    /// A flooded message as sent each time: compressed when that was agreed, then with the server
    /// taking no context over (the route says so in the handshake), so the same bytes serve each.
    private func floodFrame(size: Int) -> Data {
        var parameters = PerMessageDeflateParameters()
        parameters.clientNoContextTakeover = true
        guard script.compresses,
            let compressed = PerMessageDeflater(parameters)?.deflate(TestServer.repeatingPattern(size: size))
        else {
            return Self.header(opcode: 0x2, length: size) + TestServer.repeatingPattern(size: size)
        }
        var frame = Self.header(opcode: 0x2, length: compressed.count)
        frame[frame.startIndex] |= 0x40
        return frame + compressed
    }

    /// An unmasked, final frame's header for a payload of `length` bytes.
    private static func header(opcode: UInt8, length: Int) -> Data {
        var header: [UInt8] = [0x80 | opcode]
        switch length {
        case ..<126: header.append(UInt8(length))
        case ...0xFFFF: header += [126, UInt8(length >> 8), UInt8(length & 0xFF)]
        default: header += [127] + (0..<8).reversed().map { UInt8(truncatingIfNeeded: length >> ($0 * 8)) }
        }
        return Data(header)
    }

    private func protocolError() {
        _ = send(opcode: 0x8, Self.closePayload(1002, "protocol error"))
    }

    static func closePayload(_ code: UInt16, _ reason: String) -> [UInt8] {
        [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8)
    }

    /// Sends one unmasked, final frame; a data frame compressed when that was agreed.
    func send(opcode: UInt8, _ payload: [UInt8]) -> Bool {
        var payload = payload
        var first = 0x80 | opcode
        if opcode < 0x8, let compressed = deflater?.deflate(Data(payload)) {
            payload = Array(compressed)
            first |= 0x40
        }
        var frame = Self.header(opcode: opcode, length: payload.count)
        frame[frame.startIndex] = first
        frame.append(contentsOf: payload)
        return connection.write(frame)
    }

    /// The next frame, unmasked; `nil` when the client went away or broke a rule a server checks.
    private mutating func readFrame() -> (opcode: UInt8, isFinal: Bool, isCompressed: Bool, payload: [UInt8])? {
        guard let head = read(2), head[1] & 0x80 != 0 else { return nil }
        var length = Int(head[1] & 0x7F)
        if length == 126 {
            guard let bytes = read(2) else { return nil }
            length = Int(bytes[0]) << 8 | Int(bytes[1])
        } else if length == 127 {
            guard let bytes = read(8) else { return nil }
            length = bytes.reduce(0) { $0 << 8 | Int($1) }
        }
        let opcode = head[0] & 0x0F
        guard length <= 64 << 20, opcode < 0x8 || (length <= 125 && head[0] & 0x80 != 0) else { return nil }
        guard let mask = read(4), var payload = read(length) else { return nil }
        for index in payload.indices { payload[index] ^= mask[index & 3] }
        return (opcode, head[0] & 0x80 != 0, head[0] & 0x40 != 0, payload)
    }

    /// Exactly `count` bytes from the connection; `nil` once it ends first.
    private mutating func read(_ count: Int) -> [UInt8]? {
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while buffer.count < count {
            let received = Socket.receive(connection.descriptor, into: &chunk)
            guard received > 0 else { return nil }
            buffer += chunk[..<received]
        }
        defer { buffer.removeFirst(count) }
        return Array(buffer[..<count])
    }
}
