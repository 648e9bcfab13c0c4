import Errand
import Foundation

/// What a WebSocket server sends, in chunks of any size, read by the frame decoder and joined
/// into messages, decompressed when permessage-deflate is on. Reading it in pieces must give
/// exactly the frames, events and violation of reading it whole; no message may pass the limit;
/// text is valid UTF-8 by construction of `String`, so a violation is the only way out for bad text.
enum WebSocketTarget {
    static func run(_ data: Data) {
        var input = FuzzInput(data)
        let compression = input.bool()
        let limit = input.bool() ? Int(input.byte()) % 200 : 1 << 20
        let chunks = input.chunks()
        let whole = read([chunks.flatMap { $0 }], compression: compression, limit: limit)
        let pieces = read(chunks, compression: compression, limit: limit)
        require(whole.events == pieces.events, "events \(pieces.events) in pieces, \(whole.events) whole")
        require(whole.violation == pieces.violation, "\(String(describing: pieces.violation)) in pieces")
        for case .message(let message) in whole.events {
            switch message {
            case .text(let text): require(text.utf8.count <= limit, "a text message over the limit")
            case .binary(let bytes): require(bytes.count <= limit, "a binary message over the limit")
            }
        }
    }

    private static func read(_ chunks: [[UInt8]], compression: Bool, limit: Int)
        -> (events: [WebSocketMessageAssembler.Event], violation: WebSocketProtocolViolation?)
    {
        var decoder = WebSocketFrameDecoder(maximumPayload: limit + limit / 64 + 64, allowsCompression: compression)
        let inflater = compression ? PerMessageInflater(PerMessageDeflateParameters()) : nil
        var assembler = WebSocketMessageAssembler(maximumMessageSize: limit, inflate: inflater?.inflate(_:limit:))
        var events: [WebSocketMessageAssembler.Event] = []
        do throws(WebSocketProtocolViolation) {
            for chunk in chunks {
                decoder.append(Data(chunk))
                while let frame = try decoder.nextFrame() {
                    if let event = try assembler.receive(frame) { events.append(event) }
                }
            }
        } catch {
            return (events, error)
        }
        return (events, nil)
    }
}
