import Foundation

/// One recorded exchange, read from a HAR entry: what it matches and what it answers.
struct ReplayEntry: Sendable {
    /// Why an entry cannot be replayed, in a sentence, for the error that names the entry.
    struct Problem: Error {
        let reason: String
    }

    /// The method, uppercased.
    let method: String
    let url: ReplayURL
    let body: ReplayBody
    /// The recorded response; for an entry with status `0` (no response arrived, as browsers
    /// record a failure), the failure the replay reports; for one whose body was recorded cut
    /// short (its `content.comment` says "Truncated from …"), ``ErrandError/decoding(_:)``
    /// naming the entry, rather than the start of the body as if it were all of it.
    let answer: Result<Response, ErrandError>

    /// The entry at `index` of the recording read from `source`.
    ///
    /// - Throws: ``ErrandError/decoding(_:)`` naming the file, the entry and what is wrong.
    init(_ entry: HTTPArchive.Entry, at index: Int, in source: String) throws(ErrandError) {
        let name = "\(source): log.entries[\(index)] (\(entry.request.method) \(entry.request.url))"
        guard !entry.request.method.isEmpty else { throw .decoding("\(name): the method is empty") }
        guard let url = ReplayURL(entry.request.url) else { throw .decoding("\(name): the URL is not absolute") }
        method = entry.request.method.uppercased()
        self.url = url
        do throws(Problem) {
            body = try ReplayBody(entry.request.postData)
            answer = try Self.answer(entry.response, name: name)
        } catch {
            throw .decoding("\(name): \(error.reason)")
        }
    }

    /// Whether this entry answers a request for `method` and `url` with `body` (see
    /// ``ReplayBody/matches(_:)``), compared as `matching` says.
    func matches(method: String, url: ReplayURL, body: ReplayRequestBody?, matching: ReplayMatching) -> Bool {
        self.method == method && self.url.matches(url) && (matching == .methodAndURL || self.body.matches(body))
    }

    /// The bytes of a HAR `text` field: UTF-8 text, or base64 when `encoding` says so.
    static func decoded(_ text: String, encoding: String?, field: String) throws(Problem) -> Data {
        switch encoding?.lowercased() {
        case nil, "": return Data(text.utf8)
        case "base64":
            guard let data = Data(base64Encoded: text) else { throw Problem(reason: "\(field) is not valid base64") }
            return data
        case let other?:
            throw Problem(reason: "\(field) has the encoding \"\(other)\", which is not base64")
        }
    }

    private static func answer(_ response: HTTPArchive.Response, name: String) throws(Problem) -> Result<
        Response, ErrandError
    > {
        guard response.status > 0 else {
            let reason = "the recording has no response for \(name)" + (response.comment.map { ": \($0)" } ?? "")
            return .failure(.transport(URLError(.networkConnectionLost, userInfo: [NSLocalizedDescriptionKey: reason])))
        }
        guard (100...999).contains(response.status) else {
            throw Problem(reason: "the status \(response.status) is not HTTP's")
        }
        // A body recorded cut short would be served as if whole: the request fails instead.
        if let comment = response.content.comment, comment.contains(HAREntryBuilder.truncationNote) {
            let reason =
                "\(name): the recording holds only the start of the response body (\(comment)), so it is not"
                + " replayed as if it were whole"
            return .failure(.decoding(reason))
        }
        let data = try response.content.text.map { (text) throws(Problem) in
            try decoded(text, encoding: response.content.encoding, field: "response.content.text")
        }
        return .success(
            Response(
                statusCode: response.status, headers: headers(response.headers), data: data ?? Data(),
                trailers: headers(response.trailers ?? [])))
    }

    /// The header fields a replay reports: repeated names joined as a transport joins them;
    /// HTTP/2 pseudo-headers and masked values left out, and the fields that describe the body
    /// as it was on the wire (compressed, chunked) dropped, for the recording holds it decoded.
    private static func headers(_ fields: [HTTPArchive.NameValue]) -> [String: String] {
        var headers: [String: String] = [:]
        for field in fields {
            guard !field.name.hasPrefix(":"), field.value != Redaction.placeholder,
                !wireOnlyFields.contains(field.name.lowercased())
            else { continue }
            if let spelling = headers.keys.first(where: { $0.equalsIgnoringASCIICase(field.name) }) {
                headers[spelling, default: ""] += ", " + field.value
            } else {
                headers[field.name] = field.value
            }
        }
        return headers
    }

    private static let wireOnlyFields: Set<String> = ["content-encoding", "content-length", "transfer-encoding"]
}
