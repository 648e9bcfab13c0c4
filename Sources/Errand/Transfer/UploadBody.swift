import Foundation

/// A request body sent as it is — a file or bytes — rather than built from `arguments`.
public enum UploadBody: Sendable, Equatable {
    /// Bytes held in memory.
    case data(Data)
    /// A local file, streamed from disk as it is sent, never read whole into memory.
    case file(URL)
}
