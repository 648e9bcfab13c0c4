/// Control of the long-poll endpoints, shaped like VK's long poll:
/// - `GET /longpoll/server`: `{"server": "/longpoll/poll", "key": K, "ts": N}`, the current key
///   and cursor (N is how many events were published).
/// - `GET` (or `POST`) `/longpoll/poll?key=K&ts=N&wait=S`: held until there are events after N, then
///   `{"ts": M, "updates": ["…", …]}`; after S seconds (default 25, at most 600) with none,
///   `{"ts": N, "updates": []}`. A stale key gets `{"failed": 2}`, a cursor past the end
///   `{"failed": 1, "ts": M}`.
extension TestServer {
    /// Adds events for `/longpoll/poll`, answering the polls waiting for them.
    public func publishLongPollEvents(_ events: [String]) {
        state.longPoll.publish(events)
    }

    /// Makes the current long-poll key stale: polls with it get `{"failed": 2}`, and
    /// `/longpoll/server` hands out a new one.
    public func expireLongPollKey() {
        state.longPoll.expireKey()
    }

    /// Makes the next `/longpoll/poll` close its connection without an answer.
    public func dropNextLongPoll() {
        state.longPoll.dropNextPoll()
    }

    /// How many times `/longpoll/server` was asked for a key.
    public var longPollParameterFetchCount: Int {
        state.longPoll.parameterFetchCount
    }
}
