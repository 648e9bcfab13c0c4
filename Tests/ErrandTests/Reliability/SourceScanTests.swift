import Foundation
import Testing

/// The library never traps on what a caller or a server controls: it has no `fatalError`,
/// `try!`, `as!`, `precondition`, force unwrap or implicitly unwrapped optional at all.
@Suite("Source scan")
struct SourceScanTests {
    static let sources = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/Errand")

    static let forbidden: [(name: String, pattern: String)] = [
        ("fatalError", #"\bfatalError\s*\("#),
        ("precondition", #"\bprecondition(Failure)?\s*\("#),
        ("assert", #"\bassert(ionFailure)?\s*\("#),
        ("try!", #"\btry!"#),
        ("as!", #"\bas!"#),
        ("force unwrap or implicitly unwrapped optional", #"[\w\)\]\?]!(?!=)"#),
    ]

    @Test func theLibraryHasNoTrapsOnInput() throws {
        let files = try Self.swiftFiles()
        #expect(files.count > 40, "the scan must see the library's sources, found \(files.count)")
        let rules = try Self.compiledRules()
        var findings: [String] = []
        for file in files {
            let code = Self.strippingCommentsAndStrings(try String(contentsOf: file, encoding: .utf8))
            for (index, line) in code.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                for rule in rules where Self.matches(rule.expression, String(line)) {
                    findings.append(
                        "\(file.lastPathComponent):\(index + 1): \(rule.name): \(line.trimmingCharacters(in: .whitespaces))"
                    )
                }
            }
        }
        #expect(findings.isEmpty, "\(findings.joined(separator: "\n"))")
    }

    @Test func theScanFindsWhatItLooksFor() throws {
        let planted = """
            let a = value!  // a force unwrap
            let b = try! decode()
            let c = x as! Int
            fatalError("no")
            var d: String!
            let fine = a != b && !c  // "x!" in a string or comment is fine
            """
        let code = Self.strippingCommentsAndStrings(planted).split(separator: "\n")
        let rules = try Self.compiledRules()
        let flagged = code.map { line in rules.contains { Self.matches($0.expression, String(line)) } }
        #expect(flagged == [true, true, true, true, true, false])
    }

    /// The rules' patterns, compiled once per scan: compiling one per line made the scan take
    /// seconds under the thread sanitizer, all of it holding a thread of the concurrency pool.
    static func compiledRules() throws -> [(name: String, expression: NSRegularExpression)] {
        try forbidden.map { ($0.name, try NSRegularExpression(pattern: $0.pattern)) }
    }

    static func matches(_ expression: NSRegularExpression, _ line: String) -> Bool {
        expression.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)) != nil
    }

    static func swiftFiles() throws -> [URL] {
        let enumerator = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)
        return (enumerator?.allObjects as? [URL] ?? []).filter { $0.pathExtension == "swift" }
    }

    /// The code with comments removed and string literals emptied, line breaks kept. It walks
    /// UTF-8 bytes: every delimiter it looks for is ASCII, and a walk by `Character` took seconds
    /// under the thread sanitizer.
    static func strippingCommentsAndStrings(_ source: String) -> String {
        let bytes = Array(source.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = 0
        func starts(with text: String) -> Bool {
            bytes[index...].starts(with: text.utf8)
        }
        while index < bytes.count {
            if starts(with: "//") {
                while index < bytes.count, bytes[index] != UInt8(ascii: "\n") { index += 1 }
            } else if starts(with: "/*") {
                index += 2
                while index < bytes.count, !starts(with: "*/") {
                    if bytes[index] == UInt8(ascii: "\n") { output.append(UInt8(ascii: "\n")) }
                    index += 1
                }
                index += 2
            } else if bytes[index] == UInt8(ascii: "\"") {
                let delimiter = starts(with: "\"\"\"") ? "\"\"\"" : "\""
                index += delimiter.utf8.count
                output += Array("\"\"".utf8)
                while index < bytes.count, !starts(with: delimiter) {
                    if bytes[index] == UInt8(ascii: "\\") { index += 1 }
                    if index < bytes.count, bytes[index] == UInt8(ascii: "\n") { output.append(UInt8(ascii: "\n")) }
                    index += 1
                }
                index += delimiter.utf8.count
            } else {
                output.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: output, as: UTF8.self)
    }
}
