import Foundation

/// Runs a program the tests need (`openssl`, `mount`) and waits for it.
enum Command {
    /// Runs `executable` with `arguments`; what it prints is returned, trimmed.
    /// - Throws: when it cannot start or exits with a status other than 0.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String]) throws -> String {
        let child = try ChildProcess(executable, arguments)
        child.closeInput()
        let data = child.readToEnd()
        guard child.waitForExit() == 0 else {
            throw CocoaError(
                .fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "\(executable) \(arguments) failed"])
        }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
