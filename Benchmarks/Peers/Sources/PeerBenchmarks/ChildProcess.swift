import Foundation

/// Another program run to its end for a number it prints: the root package's bare-libcurl
/// baseline, and this executable measuring one scale benchmark in a fresh process.
enum ChildProcess {
    /// Runs `executable` with `arguments` on a thread outside the concurrency pool, which a
    /// blocking read would otherwise hold; its standard output. Its standard error is passed
    /// through, or discarded when `quiet`.
    /// - Throws: when it cannot start, or exits with a status other than 0.
    static func output(_ executable: String, _ arguments: [String], quiet: Bool = false) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: executable)
                process.arguments = arguments
                let output = Pipe()
                process.standardOutput = output
                if quiet { process.standardError = FileHandle.nullDevice }
                do {
                    try process.run()
                    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                    process.waitUntilExit()
                    guard process.terminationStatus == 0 else {
                        throw PeerError(
                            "\(executable) \(arguments.joined(separator: " ")) exited with \(process.terminationStatus)"
                        )
                    }
                    continuation.resume(returning: text)
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }
}
