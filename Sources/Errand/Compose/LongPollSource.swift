import Foundation

/// An API that hands out events by long poll: how to get a server, key and cursor, what to send
/// to wait for events, and how to read a reply. ``LongPoll`` runs the loop.
///
/// VK's user long poll, for example:
///
/// ```swift
/// struct VKMessages: LongPollSource {
///     struct Reply: Decodable { let ts: Int?; let updates: [VKUpdate]?; let failed: Int? }
///
///     func fetchParameters(using agent: NetworkAgent) async throws(ErrandError) -> LongPollParameters {
///         let server = try await agent.decoded(GetLongPollServer(), VKResponse<LongPollServer>.self).response
///         return LongPollParameters(server: "https://\(server.server)", key: server.key, cursor: String(server.ts))
///     }
///
///     func pollArguments(for parameters: LongPollParameters, wait: Int) -> [String: any Sendable] {
///         ["act": "a_check", "key": parameters.key, "ts": parameters.cursor, "wait": wait, "mode": 2, "version": 3]
///     }
///
///     func read(_ reply: Response, for parameters: LongPollParameters) throws(ErrandError) -> LongPollReply<VKUpdate> {
///         let body = try reply.decode(Reply.self)
///         switch body.failed {
///         case 2: return .parametersExpired(keepingCursor: true)   // the key expired
///         case 3: return .parametersExpired(keepingCursor: false)  // key and history lost
///         default: return .events(body.updates ?? [], nextCursor: String(body.ts ?? 0))  // 1: a new ts only
///         }
///     }
/// }
/// ```
///
/// Telegram's `getUpdates` has no key: ``fetchParameters(using:)`` returns the bot's URL without
/// asking the network, the cursor is the `offset`, and the next cursor the last `update_id` + 1.
public protocol LongPollSource: Sendable {
    /// One event the API delivers.
    associatedtype Event: Sendable

    /// Asks the API where and with what to poll (VK's `messages.getLongPollServer`). Called before
    /// the first poll and whenever ``read(_:for:)`` says the parameters expired. A network failure
    /// (``ErrandError/transport(_:)``, ``ErrandError/timedOut``, a 5xx or 429 status) is tried
    /// again after a back-off; any other error ends the sequence with it. No default.
    func fetchParameters(using agent: NetworkAgent) async throws(ErrandError) -> LongPollParameters

    /// The query of one poll sent to ``LongPollParameters/server``, holding the key and cursor and
    /// asking the server to hold the request up to `wait` seconds (VK's `wait`, Telegram's
    /// `timeout`). No default.
    func pollArguments(for parameters: LongPollParameters, wait: Int) -> [String: any Sendable]

    /// The events in a reply and the cursor to poll from next, or that the parameters expired.
    /// Throw to end the sequence with that error. No default.
    func read(_ reply: Response, for parameters: LongPollParameters) throws(ErrandError) -> LongPollReply<Event>
}

/// Where and from which point a ``LongPoll`` polls.
public struct LongPollParameters: Sendable, Hashable {
    /// The URL to poll: absolute, or a path resolved against the agent's base URL as
    /// ``BaseRequest/url`` is.
    public var server: String
    /// The access key the server handed out; `""` for an API without one.
    public var key: String
    /// Where the next poll starts: VK's `ts`, Telegram's `offset`, a feed's `since`.
    public var cursor: String

    /// Parameters for `server`, with `key` and `cursor` (both default `""`).
    public init(server: String, key: String = "", cursor: String = "") {
        self.server = server
        self.key = key
        self.cursor = cursor
    }
}

/// What a long-poll reply says, as ``LongPollSource/read(_:for:)`` reads it.
public enum LongPollReply<Event: Sendable>: Sendable {
    /// Events in order (none when the wait ran out), and the cursor for the next poll.
    case events([Event], nextCursor: String)
    /// The key or server is no longer good: fetch new parameters, then poll from the cursor held
    /// so far when `keepingCursor` (VK's `failed: 2`), else from the one fetched (`failed: 3`).
    case parametersExpired(keepingCursor: Bool)
}
