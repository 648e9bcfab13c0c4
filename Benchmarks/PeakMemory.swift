import Foundation

enum PeakMemory {
    /// The most memory the process has had resident, in kibibytes (`VmHWM`), read at the end so
    /// it covers every benchmark; `nil` where there is no `/proc`.
    static func residentHighWaterMark() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
        }
        return nil
    }
}
