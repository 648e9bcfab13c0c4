// A client generated from openapi.yaml by swift-openapi-generator streams a language model's
// reply through Errand: token by token over Server-Sent Events, on Linux too, with Errand's
// retry policy, token handling and monitors around it.
//
//   swift run GeneratedClient                         # against the embedded test server
//   OPENAI_API_KEY=… swift run GeneratedClient --url https://api.openai.com/v1 --model gpt-4o-mini
import Errand
import ErrandOpenAPI
import ErrandTestServer
import Foundation

/// Adds the API key to every request, the way an app would keep it out of the generated code.
struct APIKey: RequestInterceptor {
    let key: String

    func adapt(_ request: TransportRequest, for task: RequestTask) async throws(ErrandError) -> TransportRequest {
        var request = request
        request.headers["Authorization"] = "Bearer \(key)"
        return request
    }
}

let arguments = CommandLine.arguments
func option(_ name: String) -> String? {
    arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
}

func parsedURL(_ text: String) -> URL {
    guard let url = URL(string: text), url.scheme != nil else {
        print("Not a URL: \(text)")
        exit(2)
    }
    return url
}

var embedded: TestServer?
let serverURL: URL
if let url = option("--url") {
    serverURL = parsedURL(url)
} else {
    let server = try TestServer()
    embedded = server
    serverURL = parsedURL(server.baseURL + "/v1")
}
defer { embedded?.stop() }

let config = NetworkConfig()
config.addInterceptor(RetryPolicy())
if let key = ProcessInfo.processInfo.environment["OPENAI_API_KEY"] { config.addInterceptor(APIKey(key: key)) }
let client = Client(
    serverURL: serverURL, transport: ErrandClientTransport(agent: NetworkAgent(config: config)))

let prompt = option("--prompt") ?? "Tell me about Errand"
print("> \(prompt)")
fflush(nil)  // What `print` buffered goes before the reply, which is written unbuffered.
let output = try await client.createChatCompletion(
    headers: .init(accept: [.init(contentType: .textEventStream)]),
    body: .json(
        .init(model: option("--model") ?? "errand-1", messages: [.init(role: .user, content: prompt)], stream: true)))

switch output {
case .ok(let ok):
    let chunks = try ok.body.textEventStream.asDecodedServerSentEventsWithJSONData(
        of: Components.Schemas.ChatCompletionChunk.self, while: { $0 != ArraySlice("[DONE]".utf8) })
    var tokens = 0
    for try await chunk in chunks {
        guard let text = chunk.data?.choices.first?.delta.content ?? nil else { continue }
        FileHandle.standardOutput.write(Data(text.utf8))
        tokens += 1
    }
    print("\n(\(tokens) tokens, streamed)")
case .default(let status, let failure):
    let message = (try? failure.body.json.error.message) ?? "no message"
    print("The server answered \(status): \(message)")
    exit(1)
}
