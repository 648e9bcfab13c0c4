import Foundation

extension HAREntryBuilder {
    /// The HAR entry, as JSON, for `request` answered by `response` or failed with `error`, built
    /// as ``HARRecorder`` builds it. For the package's fuzz target, which checks that no masked
    /// value survives into it: the builder's and the exchange's initializers are internal.
    package static func entryJSON(
        redaction: Redaction, maximumBodySize: Int, request: TransportRequest, response: Response?,
        error: ErrandError?
    ) -> Data {
        let builder = HAREntryBuilder(redaction: redaction, maximumBodySize: max(maximumBodySize, 0))
        let now = ContinuousClock.now
        let exchange = Exchange(
            request: request, body: builder.sentBody(of: request), startedAt: Date(timeIntervalSince1970: 0),
            sentAt: now, headAt: response == nil ? nil : now, finishedAt: now, response: response, error: error,
            metrics: nil, attemptCount: 1)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(builder.entry(exchange))) ?? Data()
    }
}
