// swift-format-ignore-file
// (These snippets are the documents' code, line for line: formatted, they would part from it.)
import Errand
import Foundation

private func show<T>(_ value: T) {}

/// The code the article "Streaming and Server-Sent Events" shows, compiled (DocumentedCodeTests
/// checks each snippet is the article's; StreamingSnippetTests runs its chat loop).
enum StreamingSnippets {
    // snippet: StreamingAndServerSentEvents.md
    struct ChatCompletionsApi: BaseRequest {
        let prompt: String
        var url: String { "/v1/chat/completions" }
        var method: HTTPMethod { .post }
        var requestSerializerType: RequestSerializerType { .json }
        var arguments: [String: any Sendable]? {
            ["model": "gpt-4o-mini", "stream": true, "messages": [["role": "user", "content": prompt]]]
        }
    }

    struct ChatChunk: Decodable {
        struct Choice: Decodable { struct Delta: Decodable { let content: String? }; let delta: Delta }
        let choices: [Choice]
    }
    // end snippet

    struct LogsApi: BaseRequest { var url: String { "/logs" } }
    struct StatusApi: BaseRequest { var url: String { "/status" } }
    struct NotificationsApi: BaseRequest { var url: String { "/notifications" } }
    struct Notification: Decodable { let title: String }

    static func reading() async throws {
        // snippet: StreamingAndServerSentEvents.md
        let stream = try await ChatCompletionsApi(prompt: "Hello").stream()
        for try await event in stream.events {
            guard event.data != "[DONE]" else { break }
            print(try event.decode(ChatChunk.self).choices.first?.delta.content ?? "", terminator: "")
        }
        // end snippet
        // snippet: StreamingAndServerSentEvents.md
        for try await line in try await LogsApi().stream().lines {   // NDJSON, one object a line
            print(line)
        }
        let body = try await StatusApi().stream().collect(upTo: 1 << 20)   // the whole body, up to 1 MiB
        // end snippet
        // snippet: StreamingAndServerSentEvents.md
        let feed = try await NotificationsApi().stream()
        Task { try await Task.sleep(for: .seconds(60)); feed.cancel() }   // a minute of it, from anywhere
        for try await chunk in feed { print(chunk.count) }
        // end snippet
        _ = body
    }

    // snippet: StreamingAndServerSentEvents.md
    final class KeepsRefusal: RequestAccessory, @unchecked Sendable {  // Sendable: `body` is guarded by `lock`.
        private let lock = NSLock()
        private var body: String?
        var explanation: String? { lock.withLock { body } }
        func requestWillStart(_ task: RequestTask) {}
        func requestWillStop(_ task: RequestTask) {}
        func requestDidStop(_ task: RequestTask) { lock.withLock { body = task.responseString } }
    }
    // end snippet

    /// Waits a test's back-off was asked for.
    final class Waits: @unchecked Sendable {  // `lock` guards `values`.
        private let lock = NSLock()
        private var values: [TimeInterval] = []
        func append(_ wait: TimeInterval) { lock.withLock { values.append(wait) } }
    }

    static func eventSources(agent: NetworkAgent, waits: Waits) async throws {
        var savedID = ""
        // snippet: StreamingAndServerSentEvents.md
        for try await event in EventSource(NotificationsApi()) {
            show(try event.decode(Notification.self))
        }
        // end snippet
        // snippet: StreamingAndServerSentEvents.md
        let source = EventSource(NotificationsApi(), agent: agent, backoff: ReconnectBackoff(), lastEventID: savedID)
        for try await event in source {
            show(try event.decode(Notification.self))
            savedID = source.lastEventID
        }
        // end snippet
        // snippet: StreamingAndServerSentEvents.md
        let resumable = EventSource(ChatCompletionsApi(prompt: "Hello"), resendsUnsafeRequests: true)
        // end snippet
        // snippet: StreamingAndServerSentEvents.md
        let instant = ReconnectBackoff(sleep: { seconds in waits.append(seconds) })   // 1 s, 2 s, 4 s … up to 60, not waited
        let tested = EventSource(NotificationsApi(), agent: agent, backoff: instant)
        // end snippet
        _ = (resumable, tested, savedID)
    }
}
