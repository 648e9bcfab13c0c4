import Errand
import Foundation

/// The soak's Server-Sent Event streams: each an ``EventSource`` on `/sse/events` through the
/// proxy's stream port, which ends each response after a few hundred events; the source
/// reconnects with `Last-Event-ID` and the server goes on from there. Every event is checked:
/// its `id` and data agree, and it is the one after the last, across reconnects (none lost,
/// none repeated). A stream silent for two minutes is starved.
final class StreamFleet: Sendable {
    private let agent: NetworkAgent
    private let baseURL: String
    private let tally: SoakTally
    private let streams: [StreamLedger]

    /// Silence after which a stream counts as starved, in seconds.
    static let starvedAfter = 120.0

    init(count: Int, agent: NetworkAgent, port: UInt16, tally: SoakTally, seed: UInt64) {
        self.agent = agent
        baseURL = "http://127.0.0.1:\(port)"
        self.tally = tally
        var random = SoakRandom(seed: seed)
        let now = tally.elapsed
        streams = (0..<count).map { id in
            StreamLedger(
                id: id, events: random.int(in: 20...200), interval: random.int(in: 500...3000),
                retry: random.int(in: 200...1000), now: now)
        }
    }

    /// Streams that delivered an event in the last 30 s.
    var liveCount: Int {
        let now = tally.elapsed
        return streams.filter { now - $0.lastEventAt < 30 }.count
    }

    /// Streams silent past ``starvedAfter`` now; each newly starved one is a breach.
    func checkStarvation() {
        let now = tally.elapsed
        for stream in streams where stream.markStarved(now: now, after: Self.starvedAfter) {
            tally.breach(
                "every event stream keeps receiving",
                "stream \(stream.id) has had no event for \(Int(Self.starvedAfter)) s "
                    + (stream.lastEvent == 0 ? "(none yet)" : "(the last was \(stream.lastEvent))"))
        }
    }

    /// The longest any stream went without an event, in seconds.
    var longestSilence: Double {
        let now = tally.elapsed
        return streams.map { max($0.longestSilence, now - $0.lastEventAt) }.max() ?? 0
    }

    /// Runs every stream until the calling task is cancelled.
    func run() async {
        await withTaskGroup(of: Void.self) { group in
            for stream in streams {
                group.addTask { [self] in await keep(stream) }
            }
        }
    }

    private func keep(_ stream: StreamLedger) async {
        let request = StreamRequest(
            baseUrl: baseURL,
            path: "/sse/events?count=\(stream.events)&interval=\(stream.interval)"
                + "&retry=\(stream.retry)&soak=sse\(stream.id)")
        let backoff = ReconnectBackoff(initialDelay: 0.5, maximumDelay: 10)
        while !Task.isCancelled {
            let last = stream.lastEvent
            let source = EventSource(
                request, agent: agent, backoff: backoff, lastEventID: last == 0 ? "" : String(last))
            do {
                for try await event in source {
                    if let problem = stream.received(event, now: tally.elapsed) {
                        tally.breach("every event arrives once, in order, across reconnects", problem)
                    }
                    tally.count("sse.events")
                }
                guard !Task.isCancelled else { return }
                tally.breach(
                    "every event stream keeps receiving", "stream \(stream.id) ended (the server answered 204)")
            } catch {
                guard !Task.isCancelled else { return }
                tally.breach(
                    "an event source ends only when the app ends it",
                    "stream \(stream.id) ended for good with \(error)")
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }
}

/// One stream's progress: the last event's number and when it came.
final class StreamLedger: @unchecked Sendable {  // every `var` is read and written only while holding `lock`
    let id: Int
    let events: Int
    let interval: Int
    let retry: Int
    private let lock = NSLock()
    private var last = 0
    private var lastAt: Double
    private var silence = 0.0
    private var starved = false

    init(id: Int, events: Int, interval: Int, retry: Int, now: Double) {
        self.id = id
        self.events = events
        self.interval = interval
        self.retry = retry
        lastAt = now
    }

    var lastEvent: Int { lock.withLock { last } }
    var lastEventAt: Double { lock.withLock { lastAt } }
    var longestSilence: Double { lock.withLock { silence } }

    /// Checks `event`; a description of what is wrong with it, or `nil`.
    func received(_ event: ServerSentEvent, now: Double) -> String? {
        lock.withLock {
            silence = max(silence, now - lastAt)
            lastAt = now
            starved = false
            guard let number = Int(event.id ?? ""), event.data == #"{"n":\#(number)}"# else {
                return "stream \(id) received an event that is not the server's: id \(event.id ?? "none"), "
                    + "data \(event.data.prefix(60))"
            }
            defer { last = max(last, number) }
            guard number == last + 1 else {
                return "stream \(id) received event \(number) after \(last)"
                    + (number > last ? " (\(number - last - 1) lost)" : " (a repeat)")
            }
            return nil
        }
    }

    /// Whether the stream has just become starved: silent `after` seconds, not said before.
    func markStarved(now: Double, after: Double) -> Bool {
        lock.withLock {
            guard !starved, now - lastAt >= after else { return false }
            starved = true
            return true
        }
    }
}

/// One stream's request.
struct StreamRequest: BaseRequest {
    let baseUrl: String
    let path: String
    var url: String { path }
    /// How long a connection may stay silent: above the longest interval between events.
    var timeoutInterval: TimeInterval { 30 }
}
