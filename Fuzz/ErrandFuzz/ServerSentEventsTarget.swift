import Errand
import Foundation

/// A `text/event-stream` body in chunks of any size. The events, the last event ID and the
/// reconnection time must be what a direct reading of the WHATWG rules gives for the whole body,
/// and a line or an event's data over the limit must fail after exactly the events before it.
enum ServerSentEventsTarget {
    static func run(_ data: Data) {
        var input = FuzzInput(data)
        let maximum = input.bool() ? Int(input.byte()) % 64 : 1 << 20
        let chunks = input.chunks()
        let expected = Reference(stream: chunks.flatMap { $0 }, maximum: maximum)

        var parser = ServerSentEventParser(maximumEventSize: maximum)
        var events: [ServerSentEvent] = []
        var failed = false
        do throws(ErrandError) {
            for (index, chunk) in chunks.enumerated() {
                if index % 2 == 0 {
                    events += try parser.parse(Data(chunk))
                } else {
                    let dispatched = try parser.decode(Data(chunk))
                    events += dispatched.map(\.event)
                    // Each event carries the last event ID as of its own dispatch, never a later one.
                    require(events.count <= expected.lastEventIDs.count, "more events than the body holds")
                    let ids = dispatched.map(\.lastEventID)
                    let expectedIDs = expected.lastEventIDs[(events.count - dispatched.count)..<events.count]
                    require(ids.elementsEqual(expectedIDs), "last event IDs \(ids) instead of \(expectedIDs)")
                }
            }
        } catch {
            guard case .responseTooLarge(let limit) = error else { fatalError("unexpected error \(error)") }
            require(limit == maximum, "the error names \(limit), not the limit \(maximum)")
            failed = true
        }
        require(failed == expected.failed, "failed: \(failed), expected \(expected.failed)")
        // Both forms lose the events of the chunk that failed.
        require(
            failed ? expected.events.starts(with: events) : events == expected.events,
            "events \(events) instead of \(expected.events)")
        guard !failed else { return }
        require(
            parser.lastEventID == expected.lastEventID,
            "last event ID \(parser.lastEventID) instead of \(expected.lastEventID)")
        require(
            parser.reconnectionTime == expected.reconnectionTime,
            "retry \(String(describing: parser.reconnectionTime)) instead of \(String(describing: expected.reconnectionTime))"
        )
        guard (try? parser.decodeEnd())?.isEmpty == true else {
            fatalError("the end of the stream dispatched an event")
        }
        require(parser.lastEventID == expected.lastEventID, "the end of the stream lost the last event ID")
    }

    /// The WHATWG event stream interpretation, written plainly over the whole body.
    struct Reference {
        var events: [ServerSentEvent] = []
        /// The last event ID as each event was dispatched.
        var lastEventIDs: [String] = []
        var lastEventID = ""
        var reconnectionTime: Int?
        var failed = false

        init(stream: [UInt8], maximum: Int) {
            var bytes = stream[...]
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
            // Lines end at CRLF, LF or CR; what follows the last line end is no line.
            var lines: [ArraySlice<UInt8>] = []
            var start = bytes.startIndex
            var index = bytes.startIndex
            var unterminated = 0
            while index < bytes.endIndex {
                let byte = bytes[index]
                if byte == 0x0A || byte == 0x0D {
                    lines.append(bytes[start..<index])
                    index += 1
                    if byte == 0x0D, index < bytes.endIndex, bytes[index] == 0x0A { index += 1 }
                    start = index
                } else {
                    index += 1
                }
            }
            unterminated = bytes.endIndex - start
            var data: [UInt8]? = nil
            var type = ""
            var blockID: String?
            var blockRetry: Int?
            var idBuffer = ""
            for line in lines {
                if line.count > maximum {
                    failed = true
                    return
                }
                if line.isEmpty {
                    lastEventID = idBuffer
                    if var text = data {
                        text.removeLast()
                        lastEventIDs.append(lastEventID)
                        events.append(
                            ServerSentEvent(
                                id: blockID, event: type.isEmpty ? "message" : type,
                                data: String(decoding: text, as: UTF8.self), retry: blockRetry))
                    }
                    (data, type, blockID, blockRetry) = (nil, "", nil, nil)
                    continue
                }
                if line.first == UInt8(ascii: ":") { continue }
                let colon = line.firstIndex(of: UInt8(ascii: ":")) ?? line.endIndex
                let name = String(decoding: line[..<colon], as: UTF8.self)
                var value = colon < line.endIndex ? line[(colon + 1)...] : []
                if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
                switch name {
                case "data":
                    if (data?.count ?? 0) + value.count > maximum {
                        failed = true
                        return
                    }
                    data = (data ?? []) + value + [0x0A]
                case "event":
                    type = String(decoding: value, as: UTF8.self)
                case "id" where !value.contains(0):
                    idBuffer = String(decoding: value, as: UTF8.self)
                    blockID = idBuffer
                case "retry" where !value.isEmpty && value.allSatisfy({ (0x30...0x39).contains($0) }):
                    if let number = Int(String(decoding: value, as: UTF8.self)) {
                        reconnectionTime = number
                        blockRetry = number
                    }
                default:
                    break
                }
            }
            // The unterminated rest is held, not parsed, but may not grow past the limit either;
            // what may yet be a byte order mark is held apart.
            let isByteOrderMarkStart = stream.count < 3 && [0xEF, 0xBB, 0xBF].starts(with: stream)
            if unterminated > maximum, !isByteOrderMarkStart { failed = true }
        }
    }
}
