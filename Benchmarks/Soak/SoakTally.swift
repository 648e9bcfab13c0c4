import Foundation

/// What the soak counts and which of its invariants broke, shared by every client of the run.
final class SoakTally: @unchecked Sendable {  // every `var` is read and written only while holding `lock`
    /// One broken invariant: how often, and the first few times in words.
    struct Breach: Sendable {
        var count = 0
        var examples: [String] = []
    }

    private let lock = NSLock()
    private let began = ContinuousClock.now
    private var counters: [String: Int] = [:]
    private var breaches: [String: Breach] = [:]
    private var order: [String] = []

    /// Seconds since the soak began.
    var elapsed: Double {
        let duration = ContinuousClock.now - began
        return Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// `t=123.4s`, for the lines the soak prints.
    var stamp: String {
        String(format: "t=%.1fs", elapsed)
    }

    func count(_ name: String, by amount: Int = 1) {
        lock.withLock { counters[name, default: 0] += amount }
    }

    func counter(_ name: String) -> Int {
        lock.withLock { counters[name] ?? 0 }
    }

    /// Every counter whose name starts with `prefix`, without it.
    func counters(under prefix: String) -> [(String, Int)] {
        lock.withLock {
            counters.filter { $0.key.hasPrefix(prefix) }.map { (String($0.key.dropFirst(prefix.count)), $0.value) }
                .sorted { $0.0 < $1.0 }
        }
    }

    /// Notes that `invariant` broke; `detail` (stamped with the time) says how, for the first five.
    /// The first time each invariant breaks is printed at once, so a run cut short still says so.
    func breach(_ invariant: String, _ detail: String) {
        let line = "\(stamp) \(detail)"
        let isFirst = lock.withLock { () -> Bool in
            if breaches[invariant] == nil { order.append(invariant) }
            breaches[invariant, default: Breach()].count += 1
            if breaches[invariant, default: Breach()].examples.count < 5 {
                breaches[invariant, default: Breach()].examples.append(line)
            }
            return breaches[invariant]?.count == 1
        }
        if isFirst { print("  BROKEN \(invariant): \(line)") }
    }

    /// The invariants that broke, in the order they first did.
    var broken: [(invariant: String, breach: Breach)] {
        lock.withLock { order.compactMap { name in breaches[name].map { (name, $0) } } }
    }

    var breachCount: Int {
        lock.withLock { breaches.values.reduce(0) { $0 + $1.count } }
    }
}
