import Foundation

/// Errand's long-poll endpoints, shaped like VK's: `/longpoll/server` hands out a server, key and
/// cursor; `/longpoll/poll` holds a request until events come after the cursor. State: ``LongPollState``.
enum LongPollRoutes {
    static let all: [Route] = [
        Route(["GET"], "/longpoll/server", handler: server),
        // POST too, as Telegram allows, so a test can hold a POST the way it holds a GET.
        Route(["GET", "POST"], "/longpoll/poll", handler: poll),
    ]

    /// The longest `wait` a poll honours, in seconds: long enough for a test to hold a poll as a
    /// gate through a slow sanitizer run; stopping the server ends every poll at once.
    static let maxWait: TimeInterval = 600

    private static func query(_ context: RouteContext, _ name: String) -> String? {
        context.request.queryItems.last { $0.name == name }?.value
    }

    /// `{"server": "/longpoll/poll", "key": K, "ts": N}`.
    private static func server(_ context: RouteContext) -> HTTPResponse {
        let (key, cursor) = context.server.longPoll.parameters()
        return .json(["server": "/longpoll/poll", "key": key, "ts": cursor])
    }

    /// `?key=K&ts=N&wait=S` (S seconds, default 25, at most 600): `{"ts": M, "updates": [...]}` with
    /// the events after N once there are any, or none after S seconds; `{"failed": 2}` for a stale
    /// key, `{"failed": 1, "ts": M}` for a cursor that does not exist.
    private static func poll(_ context: RouteContext) -> HTTPResponse {
        guard let key = query(context, "key"), let cursor = query(context, "ts").flatMap({ Int($0) }) else {
            return .text("key and ts are required\n", status: 400)
        }
        var wait: TimeInterval = 25
        if let text = query(context, "wait") {
            guard let seconds = TimeInterval(text), seconds >= 0 else {
                return .text("wait must be a number of seconds ≥ 0\n", status: 400)
            }
            wait = min(seconds, maxWait)
        }
        let server = context.server
        switch server.longPoll.poll(key: key, cursor: cursor, wait: wait, isStopped: { server.isStopped }) {
        case .events(let next, let updates): return .json(["ts": next, "updates": updates])
        case .keyExpired: return .json(["failed": 2])
        case .cursorInvalid(let current): return .json(["failed": 1, "ts": current])
        case .drop: return .dropConnection
        }
    }
}
