import Errand
import Foundation
import OpenAPIRuntime

/// Reads a request body for ``UploadBody/stream(_:length:)`` one chunk at a time, as the
/// connection takes them, so a body of any size costs a chunk of memory.
actor BodyChunks {
    private var iterator: HTTPBody.Iterator
    private let operation: OperationRequest.Operation

    private init(_ body: HTTPBody, operation: OperationRequest.Operation) {
        iterator = body.makeAsyncIterator()
        self.operation = operation
    }

    /// `body`'s chunks, read on demand. A chunk the body throws instead ends the request, with
    /// the body's error: an `AsyncStream` cannot carry it, and ending the stream would send a
    /// chunked body cut short as if it were whole.
    static func stream(of body: HTTPBody, operation: OperationRequest.Operation) -> AsyncStream<Data> {
        let chunks = BodyChunks(body, operation: operation)
        return AsyncStream { await chunks.next() }
    }

    private func next() async -> Data? {
        // A copy, as an actor's property cannot be mutated across the wait: the transport asks
        // for one chunk at a time, so no two reads overlap.
        var chunks = iterator
        defer { iterator = chunks }
        do {
            return try await chunks.next(isolation: self).map { Data($0) }
        } catch {
            operation.bodyFailed(error)
            return nil
        }
    }
}
