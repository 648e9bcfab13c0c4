import Foundation

/// A recording's entries, found by method and location, each answering in turn: the entries
/// that match a request answer it in recorded order, one per request, and once each has
/// answered the last of them answers again. A session that fetched `/status` three times
/// replays its three answers in order, and a fourth fetch gets the third answer again.
final class ReplayIndex: Sendable {
    private struct State {
        var entries: [ReplayEntry] = []
        /// Positions in `entries` by method and location, in recorded order.
        var byRoute: [String: [Int]] = [:]
        /// Positions of entries whose location holds the placeholder (a secret scrubbed from the
        /// path), which may match any route: compared with every request.
        var wildcards: [Int] = []
        /// How many requests each entry answered.
        var answerCounts: [Int] = []
    }

    private let matching: ReplayMatching
    private let state = Locked(State())

    init(_ entries: [ReplayEntry], matching: ReplayMatching) {
        self.matching = matching
        entries.forEach(append)
    }

    /// Adds an entry after the others.
    func append(_ entry: ReplayEntry) {
        state.withLock { state in
            if entry.url.location.contains(ReplayWildcard.placeholder) {
                state.wildcards.append(state.entries.count)
            } else {
                state.byRoute[Self.route(entry.method, entry.url), default: []].append(state.entries.count)
            }
            state.entries.append(entry)
            state.answerCounts.append(0)
        }
    }

    /// The entry that answers a request, counted as having answered; `nil` when none matches.
    /// `body` is as ``ReplayBody/matches(_:)`` takes it. Entries are compared outside the lock:
    /// comparing bodies may take a while, and an entry never changes once added.
    func answer(method: String, url: ReplayURL, body: Data?) -> ReplayEntry? {
        let route = Self.route(method, url)
        let candidates = state.withLock { state in
            let positions = state.byRoute[route] ?? []
            let all = state.wildcards.isEmpty ? positions : (positions + state.wildcards).sorted()
            return all.map { (position: $0, entry: state.entries[$0]) }
        }
        let actual = body.map(ReplayRequestBody.init)
        let matches = candidates.filter {
            $0.entry.matches(method: method, url: url, body: actual, matching: matching)
        }.map(\.position)
        guard let last = matches.last else { return nil }
        return state.withLock { state in
            let position = matches.first { state.answerCounts[$0] == 0 } ?? last
            state.answerCounts[position] += 1
            return state.entries[position]
        }
    }

    /// The hosts and ports the recording holds entries for, sorted: what a miss's error lists.
    var authorities: [String] {
        state.withLock { Set($0.entries.map(\.url.authority)).sorted() }
    }

    /// How many entries it holds.
    var count: Int { state.withLock { $0.entries.count } }

    private static func route(_ method: String, _ url: ReplayURL) -> String {
        method + " " + url.location
    }
}
