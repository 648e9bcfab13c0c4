import Foundation

/// A `curl` command line that repeats a request, credentials redacted.
struct CurlCommand: CustomStringConvertible {
    let request: TransportRequest

    var description: String {
        var parts = ["curl", "-X", request.method, quoted(Redactor.url(request.url))]
        for (name, value) in Redactor.headers(of: request) {
            parts += ["-H", quoted("\(name): \(value)")]
        }
        if let body = request.body, !body.isEmpty {
            if let text = Redactor.body(body, contentType: request.value(forHeader: "Content-Type")) {
                parts += ["--data-binary", quoted(text)]
            } else {
                parts += ["--data-binary", "@-", "# \(body.count) bytes of binary body on standard input"]
            }
        } else if let stream = request.bodyStream {
            let size = stream.length.map { "\($0) bytes" } ?? "unknown length"
            parts += ["--data-binary", "@-", "# a streamed body (\(size)) on standard input"]
        }
        return parts.joined(separator: " ")
    }

    /// Single-quoted for a POSIX shell; `'` becomes `'\''`.
    private func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
