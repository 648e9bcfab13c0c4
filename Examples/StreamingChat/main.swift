// StreamingChat: a chat completion streamed token by token, as every LLM chat API sends it.
//
//     swift run StreamingChat                                    # against the embedded loopback server
//     swift run StreamingChat --base-url https://api.openai.com --api-key sk-… --model gpt-4o-mini "Hi!"
//
// One request type, `ChatCompletionsApi`, posts an OpenAI-compatible `/v1/chat/completions` call
// with `"stream": true`. `stream()` returns once the server accepted it; `events` yields the
// Server-Sent Events as they arrive, each a JSON chunk with the next piece of the answer, until
// `data: [DONE]`. The example prints the pieces as they come and the time to the first one.
// `--api-key` (else the `OPENAI_API_KEY` variable) is sent as a bearer token; any server that
// speaks the same API (a local model server, a gateway) works with `--base-url`.

import Errand
import ErrandTestServer
import Foundation

/// `POST /v1/chat/completions` with one user message, streamed.
struct ChatCompletionsApi: BaseRequest {
    let model: String
    let prompt: String
    let apiKey: String?
    let requestAccessories: [any RequestAccessory]

    var url: String { "/v1/chat/completions" }
    var method: HTTPMethod { .post }
    var requestSerializerType: RequestSerializerType { .json }
    var arguments: [String: any Sendable]? {
        ["model": model, "stream": true, "messages": [["role": "user", "content": prompt]]]
    }
    var headers: [String: String] { apiKey.map { ["Authorization": "Bearer \($0)"] } ?? [:] }
    // A model may think a while before its first token.
    var timeoutInterval: TimeInterval { 120 }
}

/// One streamed chunk of the answer: `choices[0].delta.content` is the next piece.
struct ChatChunk: Decodable {
    struct Choice: Decodable {
        struct Delta: Decodable {
            let content: String?
        }
        let delta: Delta
    }
    let choices: [Choice]
}

/// Keeps the task of a refused request, whose response holds the server's explanation.
final class RefusedTask: RequestAccessory, @unchecked Sendable {  // Sendable: `task` is only touched under `lock`.
    private let lock = NSLock()
    private var task: RequestTask?

    var body: String? {
        lock.withLock { task?.responseString }
    }

    func requestWillStart(_ task: RequestTask) {}
    func requestWillStop(_ task: RequestTask) {}
    func requestDidStop(_ task: RequestTask) {
        lock.withLock { self.task = task }
    }
}

@main
enum StreamingChat {
    static func main() async {
        do {
            try await run(arguments: Array(CommandLine.arguments.dropFirst()))
        } catch {
            print("StreamingChat failed: \(error)")
            exit(1)
        }
    }

    static func run(arguments: [String]) async throws {
        let server = try ExampleServer(arguments: arguments)
        defer { server.stop() }
        NetworkConfig.shared.baseUrl = server.baseURL

        let refused = RefusedTask()
        let request = ChatCompletionsApi(
            model: option("--model", in: arguments) ?? "errand-echo",
            prompt: prompt(in: arguments) ?? "Tell me about Errand",
            apiKey: option("--api-key", in: arguments) ?? ProcessInfo.processInfo.environment["OPENAI_API_KEY"],
            requestAccessories: [refused])
        say("You: \(request.prompt)\nAssistant: ")

        let start = ContinuousClock.now
        var firstToken: Duration?
        var pieces = 0
        do throws(ErrandError) {
            let stream = try await request.stream()
            for try await event in stream.events {
                guard event.data != "[DONE]" else { break }
                guard let piece = try event.decode(ChatChunk.self).choices.first?.delta.content else { continue }
                if firstToken == nil { firstToken = ContinuousClock.now - start }
                pieces += 1
                say(piece)
            }
        } catch {
            if case .statusCode(let status) = error {
                say("\nThe server answered \(status): \(refused.body ?? "no explanation")\n")
            }
            throw error
        }
        let total = ContinuousClock.now - start
        say("\n\nFirst token after \(milliseconds(firstToken ?? total)) ms; \(pieces) pieces in \(milliseconds(total)) ms.\n")
    }

    /// Writes `text` at once, unbuffered, so that each piece shows as it arrives.
    static func say(_ text: String) {
        fflush(nil)  // What `print` buffered goes first.
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    /// The value after `name`, as in `--model gpt-4o-mini`.
    static func option(_ name: String, in arguments: [String]) -> String? {
        guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
        return arguments[index + 1]
    }

    /// The first argument that is neither an option nor an option's value.
    static func prompt(in arguments: [String]) -> String? {
        var index = 0
        while index < arguments.count {
            if arguments[index].hasPrefix("--") {
                index += 2
                continue
            }
            return arguments[index]
        }
        return nil
    }

    static func milliseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
    }
}
