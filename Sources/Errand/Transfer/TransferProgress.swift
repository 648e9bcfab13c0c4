/// How far an upload or a download has got.
public struct TransferProgress: Sendable, Equatable {
    /// Bytes sent or written so far. A resumed download starts at the bytes it already had.
    public let completedBytes: Int64
    /// The whole body's size; `nil` when the server did not say.
    public let totalBytes: Int64?

    /// Creates a progress value.
    public init(completedBytes: Int64, totalBytes: Int64?) {
        self.completedBytes = completedBytes
        self.totalBytes = totalBytes
    }

    /// `completedBytes / totalBytes`, from 0 to 1; `nil` when the total is unknown.
    public var fractionCompleted: Double? {
        guard let totalBytes, totalBytes > 0 else { return nil }
        return min(1, Double(completedBytes) / Double(totalBytes))
    }
}
