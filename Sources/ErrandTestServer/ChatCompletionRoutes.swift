import Foundation

/// `POST /v1/chat/completions`, shaped like OpenAI's chat completions API, for tests of streaming
/// a language model's answer: a request `{"model": M, "messages": [{"role": "user", "content":
/// "…"}, …], "stream": true|false}` gets a deterministic reply to the last user message, `You said:
/// <content>. This reply streams one token at a time.`, in tokens that are words with their
/// leading space.
///
/// - Without `stream` (or `false`): `{"id": "chatcmpl-errand-N", "object": "chat.completion",
///   "created", "model", "choices": [{"index": 0, "message": {"role": "assistant", "content"},
///   "finish_reason": "stop"}], "usage": {"prompt_tokens", "completion_tokens", "total_tokens"}}`,
///   N counting this server's completions from 1.
/// - With `"stream": true`: `text/event-stream`, each event its own chunk: `data: {"id":…,
///   "object":"chat.completion.chunk","created":…,"model":…,"choices":[{"index":0,"delta":
///   {"role":"assistant"},"finish_reason":null}]}`, one such chunk per token with `"delta":
///   {"content":"<token>"}`, one with `"delta":{}` and `"finish_reason":"stop"`, with
///   `"stream_options": {"include_usage": true}` one more with `"choices":[]` and `usage`, then
///   `data: [DONE]`. Each token waits `X-Errand-Token-Delay-Ms` (header) or `delay_ms` (query)
///   milliseconds, 20 by default, at most 60,000.
/// - Invalid JSON, no `model`, no `messages` or no user message with text: 400; a missing or wrong
///   key while ``TestServer/chatCompletionsAPIKey`` is set: 401. Both as OpenAI writes errors:
///   `{"error": {"message", "type": "invalid_request_error", "param", "code"}}`.
enum ChatCompletionRoutes {
    static let all: [Route] = [
        Route(["POST"], "/v1/chat/completions", handler: completions)
    ]

    /// The pause before each token when the request names none, in milliseconds.
    static let defaultTokenDelay = 20

    private static func completions(_ context: RouteContext) -> HTTPResponse {
        if let key = context.server.chat.apiKey {
            let authorization = context.request.headers.first("Authorization") ?? ""
            guard authorization.lowercased().hasPrefix("bearer ") else {
                return error(
                    401,
                    "You didn't provide an API key. You need to provide your API key in an Authorization "
                        + "header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).")
            }
            guard authorization.dropFirst(7).trimmingCharacters(in: .whitespaces) == key else {
                return error(401, "Incorrect API key provided.", code: "invalid_api_key")
            }
        }
        guard let request = try? JSONSerialization.jsonObject(with: context.request.body) as? [String: Any] else {
            return error(400, "We could not parse the JSON body of your request. The body must be a JSON object.")
        }
        guard let model = request["model"] as? String, !model.isEmpty else {
            return error(400, "you must provide a model parameter", param: "model")
        }
        guard let messages = request["messages"] as? [[String: Any]], !messages.isEmpty else {
            return error(400, "'messages' must be a non-empty array of message objects.", param: "messages")
        }
        guard let prompt = messages.last(where: { $0["role"] as? String == "user" }).flatMap(text) else {
            return error(400, "'messages' must include a user message with text content.", param: "messages")
        }
        let delayText =
            context.request.headers.first("X-Errand-Token-Delay-Ms") ?? context.query("delay_ms")
            ?? String(defaultTokenDelay)
        guard let delay = Int(delayText.trimmingCharacters(in: .whitespaces)), (0...60_000).contains(delay) else {
            return error(400, "The token delay must be a whole number of milliseconds from 0 to 60000.")
        }

        let tokens = tokens(of: "You said: \(prompt). This reply streams one token at a time.")
        let promptTokens = messages.compactMap(text).reduce(0) { $0 + Self.tokens(of: $1).count }
        let usage = [
            "prompt_tokens": promptTokens, "completion_tokens": tokens.count,
            "total_tokens": promptTokens + tokens.count,
        ]
        let completion = Completion(
            id: "chatcmpl-errand-\(context.server.chat.nextCompletionNumber())",
            created: Int(Date().timeIntervalSince1970), model: model)

        guard request["stream"] as? Bool == true else {
            return .json([
                "id": completion.id, "object": "chat.completion", "created": completion.created, "model": model,
                "choices": [
                    [
                        "index": 0, "message": ["role": "assistant", "content": tokens.joined()],
                        "finish_reason": "stop",
                    ] as [String: Any]
                ],
                "usage": usage,
            ])
        }
        let includeUsage = (request["stream_options"] as? [String: Any])?["include_usage"] as? Bool == true
        let server = context.server
        return HTTPResponse(status: 200, headers: StreamRoutes.eventStreamHeaders()) { write in
            guard write(completion.event(choice: #"{"index":0,"delta":{"role":"assistant"},"finish_reason":null}"#))
            else { return .drop }
            for token in tokens {
                server.sleep(seconds: Double(delay) / 1000)
                let choice = #"{"index":0,"delta":{"content":\#(jsonString(token))},"finish_reason":null}"#
                guard write(completion.event(choice: choice)) else { return .drop }
            }
            guard write(completion.event(choice: #"{"index":0,"delta":{},"finish_reason":"stop"}"#)) else {
                return .drop
            }
            if includeUsage {
                let counts =
                    #"{"prompt_tokens":\#(usage["prompt_tokens"] ?? 0),"#
                    + #""completion_tokens":\#(tokens.count),"total_tokens":\#(usage["total_tokens"] ?? 0)}"#
                guard write(completion.event(choices: "[]", extra: #","usage":\#(counts)"#)) else { return .drop }
            }
            return write(Data("data: [DONE]\n\n".utf8)) ? .complete : .drop
        }
    }

    /// What every chunk of one streamed completion repeats.
    private struct Completion: Sendable {
        let id: String
        let created: Int
        let model: String

        /// `data: {…}\n\n` for a chunk with the one choice `choice` (JSON), keys in OpenAI's order.
        func event(choice: String) -> Data {
            event(choices: "[\(choice)]")
        }

        func event(choices: String, extra: String = "") -> Data {
            let json =
                #"{"id":\#(jsonString(id)),"object":"chat.completion.chunk","created":\#(created),"#
                + #""model":\#(jsonString(model)),"choices":\#(choices)\#(extra)}"#
            return Data("data: \(json)\n\n".utf8)
        }
    }

    /// A message's text: its `content` string, or the `text` of its `{"type": "text"}` parts joined.
    private static func text(_ message: [String: Any]) -> String? {
        if let content = message["content"] as? String { return content }
        guard let parts = message["content"] as? [[String: Any]] else { return nil }
        let texts = parts.filter { $0["type"] as? String == "text" }.compactMap { $0["text"] as? String }
        return texts.isEmpty ? nil : texts.joined()
    }

    /// `text` cut before each run of whitespace that follows a word, so that each token is a word
    /// with its leading whitespace and the tokens joined are `text` again.
    static func tokens(of text: String) -> [String] {
        var tokens: [String] = []
        var current = ""
        for character in text {
            if character.isWhitespace, let last = current.last, !last.isWhitespace {
                tokens.append(current)
                current = ""
            }
            current.append(character)
        }
        if !current.isEmpty { tokens.append(current) }
        return tokens
    }

    /// `text` as a JSON string literal, quotes included; only what JSON requires is escaped.
    static func jsonString(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    /// OpenAI's error body: `{"error": {"message", "type": "invalid_request_error", "param", "code"}}`.
    private static func error(_ status: Int, _ message: String, param: String? = nil, code: String? = nil)
        -> HTTPResponse
    {
        let error: [String: Any] = [
            "message": message, "type": "invalid_request_error", "param": param.map { $0 as Any } ?? NSNull(),
            "code": code.map { $0 as Any } ?? NSNull(),
        ]
        return .json(["error": error], status: status)
    }
}
