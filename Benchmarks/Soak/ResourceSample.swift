import Foundation

/// The process's open descriptors (`/proc/self/fd`), threads (`Threads:` of
/// `/proc/self/status`) and resident memory (`VmRSS:`) at one moment of the soak.
struct ResourceSample: Sendable {
    let time: Double
    let descriptors: Int
    let threads: Int
    let residentKiB: Int

    /// Now; `nil` where there is no `/proc`.
    static func now(at time: Double) -> ResourceSample? {
        guard let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count,
            let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        else { return nil }
        func field(_ name: String) -> Int? {
            status.split(separator: "\n").first { $0.hasPrefix(name) }?
                .split(whereSeparator: \.isWhitespace).dropFirst().first.flatMap { Int($0) }
        }
        guard let threads = field("Threads:"), let resident = field("VmRSS:") else { return nil }
        return ResourceSample(time: time, descriptors: descriptors, threads: threads, residentKiB: resident)
    }
}

/// The samples of two stretches of the soak — the first minutes after the load settled and the
/// last ones — and whether anything grew from one to the other.
struct ResourceGrowth: Sendable {
    struct Window: Sendable {
        let from: Double
        let to: Double
        let samples: [ResourceSample]

        var maxDescriptors: Int { samples.map(\.descriptors).max() ?? 0 }
        var maxThreads: Int { samples.map(\.threads).max() ?? 0 }
        /// The median resident memory, in MiB: one sample's spike says little.
        var medianResidentMiB: Double {
            let sorted = samples.map(\.residentKiB).sorted()
            return sorted.isEmpty ? 0 : Double(sorted[sorted.count / 2]) / 1024
        }
    }

    let first: Window
    let last: Window

    /// Windows of up to ten minutes: the first after `settle` seconds, the last ending at `end`;
    /// each a third of what follows the settling when the soak is shorter than 40 minutes.
    init(samples: [ResourceSample], settle: Double, end: Double) {
        let length = min(600, (end - settle) / 3)
        func window(_ from: Double, _ to: Double) -> Window {
            Window(from: from, to: to, samples: samples.filter { $0.time >= from && $0.time <= to })
        }
        first = window(settle, settle + length)
        last = window(end - length, end)
    }

    /// What grew past its allowance: descriptors by more than 5 % + 16, threads by more than
    /// 4, the median resident memory by more than 20 % + 16 MiB. Each with its numbers.
    var growth: [String] {
        guard !first.samples.isEmpty, !last.samples.isEmpty else { return [] }
        var grown: [String] = []
        if last.maxDescriptors > first.maxDescriptors + max(16, first.maxDescriptors / 20) {
            grown.append("descriptors: at most \(first.maxDescriptors) early, \(last.maxDescriptors) late")
        }
        if last.maxThreads > first.maxThreads + 4 {
            grown.append("threads: at most \(first.maxThreads) early, \(last.maxThreads) late")
        }
        if last.medianResidentMiB > first.medianResidentMiB * 1.2 + 16 {
            grown.append(
                String(
                    format: "resident memory: median %.1f MiB early, %.1f MiB late", first.medianResidentMiB,
                    last.medianResidentMiB))
        }
        return grown
    }
}
