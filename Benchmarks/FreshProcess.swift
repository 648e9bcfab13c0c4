import Foundation

/// Runs one memory benchmark in a fresh copy of this executable and reads its outcome back, so that
/// the peak resident memory it reports counts neither the harness nor what earlier benchmarks left
/// resident. The transfers and the slow stream consumer measure this way.
enum FreshProcess {
    static let argument = "--measure-in-fresh-process"

    /// One run: how many bytes moved, how long it took, and the resident memory it peaked at.
    struct Result: Sendable {
        let name: String
        let bytes: Int
        let seconds: Double
        /// `VmHWM` after it was reset just before the run, in kibibytes; `nil` without `/proc`.
        let peakResidentKiB: Int?
        let residentBeforeKiB: Int?
    }

    /// The parent's side: runs `ErrandBenchmarks --measure-in-fresh-process NAME` and reads its line.
    static func measure(_ name: String) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = [argument, name]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let line = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let fields = line.split(whereSeparator: \.isWhitespace)
        guard process.terminationStatus == 0, fields.count == 4, let bytes = Int(fields[0]),
            let seconds = Double(fields[1])
        else {
            throw BenchmarkError(description: "\(name) failed in its child process")
        }
        return Result(
            name: name, bytes: bytes, seconds: seconds, peakResidentKiB: Int(fields[3]),
            residentBeforeKiB: Int(fields[2]))
    }

    /// The child's side: measure `name`, print `bytes seconds residentBefore peak`, and exit.
    static func measureAndExit(_ name: String) async -> Never {
        do {
            let result =
                StreamBenchmarks.names.contains(name)
                ? try await StreamBenchmarks.measureInThisProcess(name)
                : try await TransferBenchmarks.measureInThisProcess(name)
            print(
                result.bytes, result.seconds, result.residentBeforeKiB.map(String.init) ?? "-",
                result.peakResidentKiB.map(String.init) ?? "-")
            exit(0)
        } catch {
            FileHandle.standardError.write(Data("\(name): \(error)\n".utf8))
            exit(1)
        }
    }

    /// Times `work`, which moves `bytes`, with the high-water mark reset just before it so that the
    /// peak covers `work` alone.
    static func measurePeak(_ name: String, bytes: Int, _ work: () async throws -> Void) async throws -> Result {
        PeakMemory.resetHighWaterMark()
        let before = PeakMemory.resident()
        let clock = ContinuousClock()
        let start = clock.now
        try await work()
        let elapsed = clock.now - start
        return Result(
            name: name, bytes: bytes, seconds: elapsed.nanoseconds / 1e9,
            peakResidentKiB: PeakMemory.residentHighWaterMark(), residentBeforeKiB: before)
    }
}
