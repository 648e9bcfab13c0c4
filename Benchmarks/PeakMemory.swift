import Foundation

enum PeakMemory {
    /// The most memory the process has had resident, in kibibytes (`VmHWM`), read at the end so
    /// it covers every benchmark; `nil` where there is no `/proc`.
    static func residentHighWaterMark() -> Int? {
        statusField("VmHWM:")
    }

    /// The memory resident now, in kibibytes (`VmRSS`).
    static func resident() -> Int? {
        statusField("VmRSS:")
    }

    /// Sets the high-water mark back to what is resident now, so the next reading covers only
    /// what follows (Linux: `echo 5 > /proc/self/clear_refs`).
    static func resetHighWaterMark() {
        try? Data("5".utf8).write(to: URL(fileURLWithPath: "/proc/self/clear_refs"))
    }

    private static func statusField(_ name: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(name) {
            return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
        }
        return nil
    }
}
