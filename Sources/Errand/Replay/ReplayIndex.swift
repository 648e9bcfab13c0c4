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
            state.byRoute[Self.route(entry.method, entry.url), default: []].append(state.entries.count)
            state.entries.append(entry)
            state.answerCounts.append(0)
        }
    }

    /// The entry that answers a request, counted as having answered; `nil` when none matches.
    /// `body` is as ``ReplayBody/matches(_:)`` takes it.
    func answer(method: String, url: ReplayURL, body: Data?) -> ReplayEntry? {
        state.withLock { state in
            let matches = (state.byRoute[Self.route(method, url)] ?? []).filter {
                state.entries[$0].matches(method: method, url: url, body: body, matching: matching)
            }
            guard let position = matches.first(where: { state.answerCounts[$0] == 0 }) ?? matches.last else {
                return nil
            }
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
