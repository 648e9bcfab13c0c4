// Answers the fetches of cache-tests.fyi's client (the HTTP cache conformance suite) through
// one NetworkAgent, so that the suite judges Errand's cache: its JavaScript side
// (Tests/CacheConformanceClient/errand-fetch.mjs) writes each test request as a line of JSON to
// this program's standard input, and reads the response from its standard output.
//
//     .ci/cache-tests /path/to/cache-tests    # runs the suite this way, and scores it
//
// Requests run concurrently, as the suite sends them; answers go out as they finish, each
// tagged with its request's `id`.

import Errand
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One fetch, as the JavaScript side writes it.
struct Fetch: Decodable, Sendable {
    let id: Int
    let url: String
    let method: String
    /// Field lines in order; a name may repeat.
    let headers: [[String]]
    let body: String?
}

/// What a fetch got: a response, or the error that stood in for one.
struct Answer: Encodable {
    let id: Int
    let status: Int
    let headers: [[String]]
    let body: String
    let error: String?
}

/// A fetch as an Errand request: every status is an answer, for the suite judges them all.
struct FetchRequest: BaseRequest {
    let fetch: Fetch

    var url: String { fetch.url }
    var method: HTTPMethod { HTTPMethod(rawValue: fetch.method.uppercased()) ?? .get }
    var headers: [String: String] {
        // Repeated request fields are one field with the values joined by commas (RFC 9110 §5.3).
        var joined: [String: String] = [:]
        for line in fetch.headers where line.count == 2 {
            joined[line[0], default: ""] += joined[line[0]] == nil ? line[1] : ", " + line[1]
        }
        return joined
    }
    var uploadBody: UploadBody? { fetch.body.map { .data(Data($0.utf8)) } }
    /// A method HTTPMethod does not name (`M-SEARCH`) goes out as a custom request.
    func buildCustomURLRequest() -> URLRequest? {
        guard HTTPMethod(rawValue: fetch.method.uppercased()) == nil, let url = URL(string: fetch.url) else {
            return nil
        }
        var request = URLRequest(url: url)
        request.httpMethod = fetch.method.uppercased()
        request.allHTTPHeaderFields = headers
        request.httpBody = fetch.body.map { Data($0.utf8) }
        return request
    }
    var responseSerializerType: ResponseSerializerType { .data }
    func statusCodeValidator(_ code: Int) -> Bool { true }
}

/// Writes what `task` got as one line of JSON.
func answer(_ fetch: Fetch, with task: RequestTask) {
    let response = task.response
    let answer = Answer(
        id: fetch.id, status: response?.statusCode ?? 0,
        headers: (response?.headers ?? [:]).map { [$0.key, $0.value] },
        body: response.map { String(decoding: $0.data, as: UTF8.self) } ?? "",
        error: task.error.map { "\($0)" } ?? (response == nil ? "no response" : nil))
    guard var line = try? JSONEncoder().encode(answer) else { return }
    line.append(UInt8(ascii: "\n"))
    FileHandle.standardOutput.write(line)
}

let config = NetworkConfig()
config.cacheDirectory = FileManager.default.temporaryDirectory
    .appendingPathComponent("errand-cache-conformance-\(UUID().uuidString)", isDirectory: true)
// One serial queue for every answer: lines never interleave, and the main thread may block on input.
config.callbackQueue = DispatchQueue(label: "errand-cache-conformance.answers")
config.followsHTTPCaching = true
let agent = NetworkAgent(config: config)
let outstanding = DispatchGroup()

while let line = readLine(strippingNewline: true) {
    guard let fetch = try? JSONDecoder().decode(Fetch.self, from: Data(line.utf8)) else { continue }
    outstanding.enter()
    let done: @Sendable (RequestTask) -> Void = { task in
        answer(fetch, with: task)
        outstanding.leave()
    }
    agent.start(FetchRequest(fetch: fetch), success: done, failure: done)
}
outstanding.wait()
try? FileManager.default.removeItem(at: config.cacheDirectory)
