import Foundation

/// Turns the bytes of a `text/event-stream` body, in chunks of any size, into ``ServerSentEvent``s
/// by the WHATWG rules for interpreting an event stream. Pure and transport-independent, so every
/// rule is tested on bytes alone; fields are matched as bytes and only values become strings.
package struct ServerSentEventParser {
    /// The largest line, and the largest `data` an event may gather, in bytes; past it parsing
    /// throws ``ErrandError/responseTooLarge(_:)`` with this value instead of holding more.
    let maximumEventSize: Int
    /// The last event ID string: the newest `id` field's value as of the last dispatched block,
    /// kept across events until another `id` changes it; `""` at first. A reconnect sends it as
    /// `Last-Event-ID`.
    package private(set) var lastEventID = ""
    /// The reconnection time in milliseconds from the last valid `retry` field, even one in a block
    /// that dispatched nothing; `nil` until one arrives.
    package private(set) var reconnectionTime: Int?

    private var splitter: LineSplitter
    /// How many bytes of a UTF-8 byte order mark opened the stream so far; `nil` once the start is past.
    private var byteOrderMarkMatched: Int? = 0
    /// Every `data` value of the current block, each followed by LF; empty when the block had none.
    private var data: [UInt8] = []
    /// The current block's `event` field value; empty when there was none or it was empty.
    private var eventType = ""
    /// The current block's own `id` field value, for the event it may dispatch.
    private var blockID: String?
    /// The current block's valid `retry` value, for the event it may dispatch.
    private var blockRetry: Int?
    /// The last event ID buffer: becomes ``lastEventID`` when a block ends with a blank line.
    private var lastEventIDBuffer = ""

    /// A parser at the start of a stream; see ``maximumEventSize``. `lastEventID` carries the last
    /// event ID over from an earlier connection of the same event source (default `""`).
    package init(maximumEventSize: Int, lastEventID: String = "") {
        self.maximumEventSize = maximumEventSize
        self.lastEventID = lastEventID
        lastEventIDBuffer = lastEventID
        splitter = LineSplitter(maximumLineLength: maximumEventSize, endsLineOnCarriageReturn: true)
    }

    /// An event with what the stream said up to it: one chunk may hold several events, and a
    /// reader that stops after the first must resume from the first's last event ID, not from
    /// the chunk's.
    package struct Dispatched {
        package let event: ServerSentEvent
        /// The last event ID as of this event's dispatch.
        package let lastEventID: String
        /// The reconnection time as of this event's dispatch.
        package let reconnectionTime: Int?
    }

    /// Feeds the next chunk and returns the events it completes, in order.
    ///
    /// - Throws: ``ErrandError/responseTooLarge(_:)`` for a line or an event's data larger than
    ///   ``maximumEventSize``; the parser must not be fed again.
    package mutating func parse(_ chunk: Data) throws(ErrandError) -> [ServerSentEvent] {
        try parseDispatched(chunk).map(\.event)
    }

    /// Feeds the next chunk and returns the events it completes, in order, each with the stream's
    /// state as of its dispatch. Throws as ``parse(_:)`` does.
    package mutating func parseDispatched(_ chunk: Data) throws(ErrandError) -> [Dispatched] {
        var events: [Dispatched] = []
        try chunk.withBytes { (bytes) throws(ErrandError) in
            try parse(bytes) { (event) throws(ErrandError) in events.append(event) }
        }
        return events
    }

    /// Ends the stream. A block without its closing blank line is discarded, as WHATWG says, and
    /// the parser starts over as at a new stream's start; ``lastEventID`` and
    /// ``reconnectionTime`` are kept, as a reconnect needs them.
    package mutating func finish() {
        splitter = LineSplitter(maximumLineLength: maximumEventSize, endsLineOnCarriageReturn: true)
        byteOrderMarkMatched = 0
        resetBlock()
    }

    private static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    private mutating func parse(
        _ bytes: UnsafeRawBufferPointer, dispatch: (Dispatched) throws(ErrandError) -> Void
    ) throws(ErrandError) {
        var bytes = bytes
        if let matched = byteOrderMarkMatched {
            var matched = matched
            while matched < 3, let byte = bytes.first, byte == Self.byteOrderMark[matched] {
                matched += 1
                bytes = UnsafeRawBufferPointer(rebasing: bytes.dropFirst())
            }
            if matched < 3, bytes.isEmpty {
                byteOrderMarkMatched = matched
                return
            }
            byteOrderMarkMatched = nil
            if matched < 3 {
                // Not a byte order mark after all: the bytes held back are the stream's first. Being
                // 0xEF or 0xBB, they cannot end a line, so no line is handed out here.
                try splitter.append(Data(Self.byteOrderMark[..<matched])) { (_) throws(ErrandError) in }
            }
        }
        // Processing a line mutates `self`, so the splitter is moved out meanwhile; the stand-in
        // holds an empty array, which allocates nothing.
        var splitter = LineSplitter(maximumLineLength: 0, endsLineOnCarriageReturn: true)
        swap(&splitter, &self.splitter)
        defer { swap(&splitter, &self.splitter) }
        try splitter.append(bytes) { (line) throws(ErrandError) in try process(line, dispatch) }
    }

    private mutating func process(
        _ line: UnsafeRawBufferPointer, _ dispatch: (Dispatched) throws(ErrandError) -> Void
    ) throws(ErrandError) {
        guard !line.isEmpty else {
            try dispatchBlock(dispatch)
            return
        }
        let colon = line.firstIndex(of: Self.colon) ?? line.count
        guard colon > 0 else { return }  // a comment
        let name = UnsafeRawBufferPointer(rebasing: line[..<colon])
        var valueStart = min(colon + 1, line.count)
        if valueStart < line.count, line[valueStart] == Self.space { valueStart += 1 }
        let value = UnsafeRawBufferPointer(rebasing: line[valueStart...])
        if Self.is(name, "data") {
            // The size an event's data would have, so one more line can never pass the limit.
            guard data.count + value.count <= maximumEventSize else {
                throw .responseTooLarge(maximumEventSize)
            }
            data.append(contentsOf: value)
            data.append(Self.lineFeed)
        } else if Self.is(name, "id") {
            guard !value.contains(0) else { return }
            let id = String(decoding: value, as: UTF8.self)
            lastEventIDBuffer = id
            blockID = id
        } else if Self.is(name, "event") {
            eventType = String(decoding: value, as: UTF8.self)
        } else if Self.is(name, "retry") {
            guard let milliseconds = Self.digits(value) else { return }
            reconnectionTime = milliseconds
            blockRetry = milliseconds
        }
    }

    private mutating func dispatchBlock(_ dispatch: (Dispatched) throws(ErrandError) -> Void) throws(ErrandError) {
        lastEventID = lastEventIDBuffer
        guard !data.isEmpty else {
            resetBlock()
            return
        }
        data.removeLast()  // the LF after the last value
        let event = ServerSentEvent(
            id: blockID, event: eventType.isEmpty ? "message" : eventType,
            data: String(decoding: data, as: UTF8.self), retry: blockRetry)
        resetBlock()
        try dispatch(Dispatched(event: event, lastEventID: lastEventID, reconnectionTime: reconnectionTime))
    }

    private mutating func resetBlock() {
        data.removeAll(keepingCapacity: true)
        eventType = ""
        blockID = nil
        blockRetry = nil
    }

    private static let lineFeed = UInt8(ascii: "\n")
    private static let colon = UInt8(ascii: ":")
    private static let space = UInt8(ascii: " ")

    /// Whether a field name is exactly `expected`, compared as bytes: names are case-sensitive.
    private static func `is`(_ name: UnsafeRawBufferPointer, _ expected: StaticString) -> Bool {
        name.count == expected.utf8CodeUnitCount
            && (name.baseAddress.map { memcmp($0, expected.utf8Start, name.count) == 0 } ?? true)
    }

    /// The value as a base-ten integer when it is one or more ASCII digits and fits in `Int`;
    /// otherwise `nil`, and the `retry` field is ignored.
    private static func digits(_ value: UnsafeRawBufferPointer) -> Int? {
        guard !value.isEmpty else { return nil }
        var result = 0
        for byte in value {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (shifted, overflowShift) = result.multipliedReportingOverflow(by: 10)
            let (sum, overflowSum) = shifted.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
            guard !overflowShift, !overflowSum else { return nil }
            result = sum
        }
        return result
    }
}
