import Foundation

@testable import Errand

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A program the tests start (`openssl`, `python3`, `mount`), with pipes to its standard input and
/// output and its standard error discarded, or sent to the output pipe too.
///
/// Started with `posix_spawn`, not Foundation's `Process`: on Linux with Swift 6.3.1,
/// `Process.run()` copies 256 bytes of each `/proc/self/fd` entry whatever its length and now and
/// then reads past the end of a mapping, crashing the whole test run (swift-corelibs-foundation
/// pull request 5472); the more descriptors the suite has open, the likelier.
final class ChildProcess: Sendable {
    let pid: pid_t
    /// The write end of the child's standard input, until ``closeInput()``.
    private let input: Locked<Int32?>
    /// The read end of the child's standard output.
    private let output: Int32

    /// Starts `executable` with `arguments` and this process's environment, `environment` added;
    /// with `keepingStandardError`, what it writes there arrives with its output.
    init(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:],
        keepingStandardError: Bool = false
    ) throws {
        var inputPipe: [Int32] = [-1, -1]
        var outputPipe: [Int32] = [-1, -1]
        // Socket pairs, made close-on-exec atomically (Glibc does not import pipe2), so no other
        // child started meanwhile inherits an end and holds it open.
        #if canImport(Glibc)
            let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        #else
            let type = SOCK_STREAM
        #endif
        guard socketpair(AF_UNIX, type, 0, &inputPipe) == 0 else { throw Self.failure("pipe", executable) }
        guard socketpair(AF_UNIX, type, 0, &outputPipe) == 0 else {
            inputPipe.forEach { _ = close($0) }
            throw Self.failure("pipe", executable)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, inputPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, outputPipe[1], 1)
        if keepingStandardError {
            posix_spawn_file_actions_adddup2(&actions, outputPipe[1], 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        let environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }.map {
            "\($0.key)=\($0.value)"
        }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        _ = close(inputPipe[0])
        _ = close(outputPipe[1])
        guard spawned == 0 else {
            _ = close(inputPipe[1])
            _ = close(outputPipe[0])
            throw Self.failure("start", executable)
        }
        self.pid = pid
        input = Locked(inputPipe[1])
        output = outputPipe[0]
    }

    deinit {
        closeInput()
        _ = close(output)
    }

    /// What the child printed next, up to 64 KiB; empty once it closed its output. Blocks.
    func readAvailable() -> Data {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let count = buffer.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
        return count > 0 ? Data(buffer[0..<count]) : Data()
    }

    /// Everything the child prints until it closes its output. Blocks.
    func readToEnd() -> Data {
        var data = Data()
        while case let chunk = readAvailable(), !chunk.isEmpty { data.append(chunk) }
        return data
    }

    /// Closes the child's standard input: it reads the end of it.
    func closeInput() {
        let descriptor = input.withLock { input in
            defer { input = nil }
            return input
        }
        if let descriptor { _ = close(descriptor) }
    }

    /// Waits for the child to exit; its exit status, or -1 when it was killed. Blocks.
    @discardableResult
    func waitForExit() -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        // WIFEXITED and WEXITSTATUS, which Swift does not import.
        return status & 0x7f == 0 ? (status >> 8) & 0xff : -1
    }

    private static func failure(_ step: String, _ executable: String) -> Error {
        CocoaError(
            .fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "cannot \(step) \(executable): errno \(errno)"])
    }
}
