/// A step of a ``BatchRequest`` built with ``BatchRequest/init(steps:runsToEnd:)``.
public struct BatchStep: Sendable {
    let step: ComposedStep

    /// A request.
    public static func request(_ request: any BaseRequest) -> BatchStep { BatchStep(step: .request(request)) }
    /// A batch inside this one: its steps run at the same time as this batch's others.
    public static func batch(_ batch: BatchRequest) -> BatchStep { BatchStep(step: .batch(batch)) }
    /// A chain inside this batch: its steps run one after another while this batch's others run.
    public static func chain(_ chain: ChainRequest) -> BatchStep { BatchStep(step: .chain(chain)) }
}
