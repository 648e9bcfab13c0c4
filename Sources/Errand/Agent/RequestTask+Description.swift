import Foundation

extension RequestTask: CustomStringConvertible {
    /// The request's type, method and URL, its outcome, attempts, tag and cache settings, header
    /// fields and a `curl` command that repeats it — credentials, cookies and token-like
    /// arguments redacted.
    public var description: String {
        let (sent, response, error, attempts, tag) = (
            transportRequest, self.response, self.error, attemptCount, self.tag
        )
        let name = String(describing: type(of: request))
        let details = detailsDescription(attempts: attempts, tag: tag)
        guard let sent else {
            if let response, response.isDataFromCache {
                return "<RequestTask \(name): served from the cache → \(response.statusCode)\(details)>"
            }
            return "<RequestTask \(name): not started\(error.map { ", \($0)" } ?? "")\(details)>"
        }
        let outcome = error.map { "failed: \($0)" } ?? response.map { "\($0.statusCode)" } ?? "running"
        var lines = ["<RequestTask \(name): \(sent.method) \(Redactor.url(sent.url)) → \(outcome)\(details)>"]
        lines += Redactor.headers(of: sent).map { "  \($0.name): \($0.value)" }
        lines.append(CurlCommand(request: sent).description)
        return lines.joined(separator: "\n")
    }

    /// `; attempts 2; tag 7; cache 300 s, offlineFallback`, leaving out what is at its default.
    private func detailsDescription(attempts: Int, tag: Int) -> String {
        var details: [String] = []
        if attempts > 1 { details.append("attempts \(attempts)") }
        if tag != 0 { details.append("tag \(tag)") }
        if request.cacheTimeInSeconds > 0 {
            details.append("cache \(request.cacheTimeInSeconds) s, \(request.cachePolicy)")
        }
        return details.isEmpty ? "" : "; " + details.joined(separator: "; ")
    }
}
