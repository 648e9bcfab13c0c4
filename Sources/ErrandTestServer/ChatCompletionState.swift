import Foundation

/// What the chat-completions endpoint (``ChatCompletionRoutes``) remembers, one per server: the
/// API key it demands, if any, and how many completions it has answered (which numbers their ids).
final class ChatCompletionState: @unchecked Sendable {  // every `var` is read and written only while holding `lock`
    private let lock = NSLock()
    private var key: String?
    private var completions = 0

    /// When set, a request without `Authorization: Bearer <key>` gets 401.
    var apiKey: String? {
        get { lock.withLock { key } }
        set { lock.withLock { key = newValue } }
    }

    /// The next completion's number: 1 for the first on this server.
    func nextCompletionNumber() -> Int {
        lock.withLock {
            completions += 1
            return completions
        }
    }
}
