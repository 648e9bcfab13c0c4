import Foundation

/// Turns a body's chunks, in order, into the elements a view of a ``ResponseStream`` yields:
/// lines, events.
package protocol ChunkDecoder {
    associatedtype Element
    /// The elements `chunk` completes, in order.
    mutating func decode(_ chunk: Data) throws(ErrandError) -> [Element]
    /// The elements the end of the body completes.
    mutating func decodeEnd() throws(ErrandError) -> [Element]
}

extension LineSplitter: ChunkDecoder {
    package mutating func decode(_ chunk: Data) throws(ErrandError) -> [String] {
        try appendDecoding(chunk)
    }

    /// The last line, even without a line end.
    package mutating func decodeEnd() throws(ErrandError) -> [String] {
        try finishDecoding().map { [$0] } ?? []
    }
}

extension ServerSentEventParser: ChunkDecoder {
    package mutating func decode(_ chunk: Data) throws(ErrandError) -> [Dispatched] {
        try parseDispatched(chunk)
    }

    /// Nothing: an event the body cut off is dropped, as the WHATWG rules say.
    package mutating func decodeEnd() throws(ErrandError) -> [Dispatched] {
        finish()
        return []
    }
}
