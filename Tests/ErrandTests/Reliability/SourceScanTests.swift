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
        var findings: [String] = []
        for file in files {
            let code = Self.strippingCommentsAndStrings(try String(contentsOf: file, encoding: .utf8))
            for (index, line) in code.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                for rule in Self.forbidden where line.range(of: rule.pattern, options: .regularExpression) != nil {
                    findings.append(
                        "\(file.lastPathComponent):\(index + 1): \(rule.name): \(line.trimmingCharacters(in: .whitespaces))"
                    )
                }
            }
        }
        #expect(findings.isEmpty, "\(findings.joined(separator: "\n"))")
    }

    @Test func theScanFindsWhatItLooksFor() {
        let planted = """
            let a = value!  // a force unwrap
            let b = try! decode()
            let c = x as! Int
            fatalError("no")
            var d: String!
            let fine = a != b && !c  // "x!" in a string or comment is fine
            """
        let code = Self.strippingCommentsAndStrings(planted).split(separator: "\n")
        let flagged = code.map { line in
            Self.forbidden.contains { line.range(of: $0.pattern, options: .regularExpression) != nil }
        }
        #expect(flagged == [true, true, true, true, true, false])
    }

    static func swiftFiles() throws -> [URL] {
        let enumerator = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)
        return (enumerator?.allObjects as? [URL] ?? []).filter { $0.pathExtension == "swift" }
    }

    /// The code with comments removed and string literals emptied, line breaks kept.
    static func strippingCommentsAndStrings(_ source: String) -> String {
        var output = ""
        var characters = Array(source)[...]
        while let character = characters.first {
            if characters.starts(with: "//") {
                while let next = characters.first, next != "\n" { characters.removeFirst() }
            } else if characters.starts(with: "/*") {
                characters.removeFirst(2)
                while !characters.isEmpty, !characters.starts(with: "*/") {
                    if characters.removeFirst() == "\n" { output.append("\n") }
                }
                characters = characters.dropFirst(2)
            } else if character == "\"" {
                let delimiter = characters.starts(with: "\"\"\"") ? "\"\"\"" : "\""
                characters.removeFirst(delimiter.count)
                output.append("\"\"")
                while !characters.isEmpty, !characters.starts(with: delimiter) {
                    let removed = characters.removeFirst()
                    if removed == "\\" { characters = characters.dropFirst() }
                    if removed == "\n" { output.append("\n") }
                }
                characters = characters.dropFirst(delimiter.count)
            } else {
                output.append(characters.removeFirst())
            }
        }
        return output
    }
}
