/// How far a batch has got: members finished, cancelled ones included, out of all members.
public struct BatchProgress: Sendable, Equatable {
    /// Members that have finished, successfully or not.
    public let finished: Int
    /// All members of the batch.
    public let total: Int

    /// Creates a progress value.
    public init(finished: Int, total: Int) {
        self.finished = finished
        self.total = total
    }

    /// `finished / total`, from 0 to 1; `1` for an empty batch.
    public var fractionCompleted: Double {
        total == 0 ? 1 : Double(finished) / Double(total)
    }
}
