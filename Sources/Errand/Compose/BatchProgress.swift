/// How far a ``BatchTask`` has got: how many of its steps have finished, of how many.
public struct BatchProgress: Sendable, Equatable {
    /// Steps finished, successfully or not.
    public var finished: Int
    /// Steps in the batch.
    public var total: Int

    /// Creates a progress value.
    public init(finished: Int, total: Int) {
        self.finished = finished
        self.total = total
    }

    /// `finished / total`, from 0 to 1; 1 for an empty batch.
    public var fractionCompleted: Double {
        total == 0 ? 1 : Double(finished) / Double(total)
    }
}
