/// Splits a `text/event-stream` body into its events' `data`, as a user of a client with no
/// event parser of its own writes it: events end at a blank line, `data:` lines (one space
/// after the colon dropped) are joined with LF, other fields and comments are skipped. Line ends
/// are LF, as `sse_server.py` sends them; a full parser (CR, CRLF, BOM, `retry`) is Errand's job
/// in the other column, not this one's.
struct EventSplitter {
    private var pending: [UInt8] = []
    /// Where the search for the next blank line resumes: bytes before it hold none.
    private var searched = 0

    mutating func append(_ bytes: some Sequence<UInt8>) {
        pending.append(contentsOf: bytes)
    }

    /// The next complete event's data, or `nil` until more bytes arrive.
    mutating func next() -> String? {
        let newline = UInt8(ascii: "\n")
        while true {
            var index = max(searched, 1)
            while index < pending.count, !(pending[index] == newline && pending[index - 1] == newline) {
                index += 1
            }
            guard index < pending.count else {
                searched = max(pending.count, 1)
                return nil
            }
            let block = pending[..<(index - 1)]
            pending.removeFirst(index + 1)
            searched = 0
            var data: [UInt8] = []
            var hasData = false
            for line in block.split(separator: newline, omittingEmptySubsequences: true)
            where line.starts(with: Self.dataField) {
                if hasData { data.append(newline) }
                hasData = true
                var value = line.dropFirst(Self.dataField.count)
                if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
                data += value
            }
            if hasData { return String(decoding: data, as: UTF8.self) }
        }
    }

    private static let dataField = Array("data:".utf8)
}
