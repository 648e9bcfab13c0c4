// swift-format-ignore-file
// (These snippets are the documents' code, line for line: formatted, they would part from it.)
import Errand
import Foundation

private func handle<T>(_ value: T) {}

/// The code the article "Long polling" shows, compiled (DocumentedCodeTests checks each snippet is the article's).
enum LongPollingSnippets {
    // snippet: LongPolling.md
    struct TelegramUpdates: LongPollSource {
        let token: String

        struct Update: Decodable, Sendable { let update_id: Int }  // and the fields you use
        private struct Reply: Decodable { let ok: Bool; let result: [Update] }

        // Telegram has no key to fetch: the bot's URL is the server, the offset the cursor.
        func fetchParameters(using agent: NetworkAgent) async throws(ErrandError) -> LongPollParameters {
            LongPollParameters(server: "https://api.telegram.org/bot\(token)/getUpdates", cursor: "0")
        }

        func pollArguments(for parameters: LongPollParameters, wait: Int) -> [String: any Sendable] {
            ["offset": parameters.cursor, "timeout": wait]
        }

        func read(_ reply: Response, for parameters: LongPollParameters) throws(ErrandError) -> LongPollReply<Update> {
            let updates = try reply.decode(Reply.self).result
            let next = updates.last.map { String($0.update_id + 1) } ?? parameters.cursor
            return .events(updates, nextCursor: next)
        }
    }
    // end snippet

    static func bot(token: String) {
        // snippet: LongPolling.md
        let bot = Task {
            for try await update in LongPoll(TelegramUpdates(token: token), wait: 50) {
                handle(update)
            }
        }
        // Later: stops the loop and the poll in flight.
        bot.cancel()
        // end snippet
    }

    /// Delays a test's back-off was asked for.
    final class Delays: @unchecked Sendable {  // `lock` guards `values`.
        private let lock = NSLock()
        private var values: [TimeInterval] = []
        func append(_ delay: TimeInterval) { lock.withLock { values.append(delay) } }
    }

    static func testing(agent: NetworkAgent, delays: Delays) {
        // snippet: LongPolling.md
        let backoff = ReconnectBackoff(initialDelay: 0.01, maximumDelay: 0.08) { seconds in
            delays.append(seconds)
        }
        let updates = LongPoll(TelegramUpdates(token: "test"), agent: agent, wait: 1, backoff: backoff)
        // end snippet
        _ = updates
    }
}
