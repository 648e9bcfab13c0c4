import Foundation

/// Reads the answer to a WebSocket's upgrade request as its bytes arrive, in whatever pieces:
/// the head, line by line, interim (1xx) heads skipped; after a `101`, everything that follows is
/// the peer's frames; after any other status, the body as RFC 9112 §6.3 frames it — none for
/// 204, 304 and 1xx, `Transfer-Encoding: chunked` decoded, `Content-Length` bytes, else up to the
/// close — of which at most ``bodyLimit`` bytes are kept, the answer ending there.
///
/// Bounded whatever a server sends: the whole head (every line of every interim head) may hold
/// ``headLimit`` bytes, as libcurl bounds a response's head, and each byte is looked at once.
package struct HandshakeAnswerReader {
    /// What the bytes taken so far amount to, in order.
    package enum Event: Equatable {
        /// The final head: `101`, or the refusal's status.
        case head(statusCode: Int, headers: [String: String])
        /// After a `101`: the first of the peer's bytes, which came with the head.
        case upgraded(Data)
        /// A piece of a refusal's body, decoded.
        case body(Data)
        /// The refusal's body ended (or reached ``bodyLimit``): nothing more is to be read.
        case ended
    }

    /// Why an answer is refused: what the transport fails the handshake with.
    package enum Failure: Error, Equatable {
        /// Not an HTTP head, a head over ``headLimit``, or a body framed as no server may.
        case badServerResponse
        /// The connection ended before the answer did.
        case connectionLost
    }

    private enum Step {
        case head
        /// Reading a refusal's body.
        case body(Framing)
        case upgraded
        case ended
    }

    private enum Framing {
        case length(remaining: Int)
        case chunked(ChunkedBodyDecoder)
        case untilClose
    }

    /// The most bytes a head may have, interim heads included: libcurl's own bound (300 KiB).
    package static let headLimit = 300 << 10
    /// The most bytes of a refusal's body kept.
    package static let bodyLimit = 64 << 10

    private var step = Step.head
    private var head = CurlResponseHead()
    /// The start of the line being read; bytes already scanned for its end are not scanned again.
    private var line = Data()
    private var headBytes = 0
    private var keptBodyBytes = 0

    package init() {}

    /// The final head's `Set-Cookie` values, each apart (they hold commas); empty before it ends.
    package var setCookieFields: [String] {
        head.values(of: "Set-Cookie")
    }

    /// Whether a `101` came and its head ended: what follows is the peer's.
    package var isUpgraded: Bool {
        if case .upgraded = step { true } else { false }
    }

    /// What `bytes` completes.
    package mutating func take(_ bytes: Data) throws(Failure) -> [Event] {
        var events: [Event] = []
        var rest = bytes[...]
        while !rest.isEmpty {
            switch step {
            case .head:
                rest = try takeHead(rest, into: &events)
            case .body(var framing):
                rest = takeBody(rest, framing: &framing, into: &events)
                if case .body = step { step = .body(framing) }
            case .upgraded, .ended:
                return events
            }
        }
        return events
    }

    /// The connection ended: what that completes.
    package mutating func takeEnd() throws(Failure) -> [Event] {
        switch step {
        case .head: throw .connectionLost
        case .body(.untilClose): return finishBody()
        case .body: throw .connectionLost
        case .upgraded, .ended: return []
        }
    }

    // MARK: The head

    private mutating func takeHead(_ bytes: Data.SubSequence, into events: inout [Event]) throws(Failure)
        -> Data
        .SubSequence
    {
        guard let newline = bytes.firstIndex(of: 0x0A) else {
            try count(bytes.count)
            line.append(contentsOf: bytes)
            return bytes[bytes.endIndex...]
        }
        try count(newline + 1 - bytes.startIndex)
        line.append(contentsOf: bytes[bytes.startIndex...newline])
        let outcome = line.withUnsafeBytes { head.take($0) }
        line.removeAll(keepingCapacity: true)
        let rest = bytes[(newline + 1)...]
        if case .notHTTP = outcome { throw .badServerResponse }
        guard case .complete = outcome else { return rest }
        try headEnded(into: &events)
        if case .upgraded = step, !rest.isEmpty { events.append(.upgraded(Data(rest))) }
        return rest
    }

    private mutating func count(_ bytes: Int) throws(Failure) {
        headBytes += bytes
        guard headBytes <= Self.headLimit else { throw .badServerResponse }
    }

    private mutating func headEnded(into events: inout [Event]) throws(Failure) {
        let statusCode = head.statusCode
        events.append(.head(statusCode: statusCode, headers: head.headers))
        if statusCode == 101 {
            step = .upgraded
            return
        }
        let framing = try Self.framing(of: head, statusCode: statusCode)
        guard let framing else {
            step = .ended
            events.append(.ended)
            return
        }
        step = .body(framing)
    }

    /// How a refusal's body is framed; `nil` when it has none.
    private static func framing(of head: CurlResponseHead, statusCode: Int) throws(Failure) -> Framing? {
        if statusCode == 204 || statusCode == 304 || (100..<200).contains(statusCode) { return nil }
        let codings = head.values(of: "Transfer-Encoding").flatMap { $0.split(separator: ",") }.map(\.trimmed)
        if let last = codings.last {
            // Only a final chunked coding frames the body; any other runs to the close.
            return last.equalsIgnoringASCIICase("chunked") ? .chunked(ChunkedBodyDecoder()) : .untilClose
        }
        let lengths = Set(head.values(of: "Content-Length").flatMap { $0.split(separator: ",") }.map(\.trimmed))
        guard let length = lengths.first else { return .untilClose }
        guard lengths.count == 1, !length.isEmpty, length.utf8.count <= 18,
            length.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            let value = Int(length)
        else { throw .badServerResponse }
        return value == 0 ? nil : .length(remaining: value)
    }

    // MARK: A refusal's body

    private mutating func takeBody(
        _ bytes: Data.SubSequence, framing: inout Framing, into events: inout [Event]
    ) -> Data.SubSequence {
        switch framing {
        case .length(let remaining):
            let count = min(remaining, bytes.count)
            keep(Data(bytes.prefix(count)), into: &events)
            framing = .length(remaining: remaining - count)
            if remaining == count { events += finishBody() }
            return bytes.dropFirst(count)
        case .chunked(var decoder):
            for piece in decoder.decode(Data(bytes)) { keep(piece, into: &events) }
            framing = .chunked(decoder)
            // A refusal's body framed as no server may: what came of it is kept, and it ends.
            if decoder.isComplete || decoder.isMalformed { events += finishBody() }
            return bytes[bytes.endIndex...]
        case .untilClose:
            keep(Data(bytes), into: &events)
            return bytes[bytes.endIndex...]
        }
    }

    /// Keeps what fits under ``bodyLimit``; the body ends once it is reached.
    private mutating func keep(_ piece: Data, into events: inout [Event]) {
        guard case .body = step, !piece.isEmpty else { return }
        let kept = piece.prefix(Self.bodyLimit - keptBodyBytes)
        keptBodyBytes += kept.count
        if !kept.isEmpty { events.append(.body(Data(kept))) }
        if keptBodyBytes == Self.bodyLimit { events += finishBody() }
    }

    private mutating func finishBody() -> [Event] {
        guard case .body = step else { return [] }
        step = .ended
        return [.ended]
    }
}
