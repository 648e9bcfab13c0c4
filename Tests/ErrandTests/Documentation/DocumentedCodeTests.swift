import Foundation
import Testing

/// The Swift every document shows compiles: each fenced `swift` block of README.md and of the
/// DocC articles is made, line for line, of snippets of this folder's code — marked
/// `// snippet: <document>` … `// end snippet`, and compiled with the tests, most of it run — or
/// belongs to a package README.md shows whole, which `.ci/readme-packages` builds. A signature
/// written from memory, or a snippet that drifted from its document, fails here.
///
/// Lines compare without their indentation, and blank lines are skipped: a snippet may sit in a
/// function where its document shows top-level code.
@Suite("Documented code")
struct DocumentedCodeTests {
    /// A fenced `swift` block of a document.
    struct Block {
        let document: String
        let line: Int
        let lines: [String]
        /// Whether a `<!-- package: … -->` comment marks it as part of a package
        /// `.ci/readme-packages` builds.
        let isBuilt: Bool
    }

    /// A marked snippet of this folder's code.
    struct Snippet {
        let place: String
        let document: String
        let lines: [String]
    }

    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Blocks that no snippet compiles, and why: code of other libraries, and pieces of a
    /// `Package.swift` whose whole README.md shows and `.ci/readme-packages` builds.
    static let uncompiled: [(document: String, firstLine: String, reason: String)] = [
        ("ComingFromAlamofireAndMoya.md", "let user = try await AF.request(", "Alamofire's code"),
        ("ComingFromAlamofireAndMoya.md", "enum UserService: TargetType {", "Moya's code"),
        ("GettingStarted.md", "dependencies: [", "a piece of README.md's MyTool Package.swift"),
        ("TestingYourAPILayer.md", ".testTarget(name: \"MyAppTests\"", "a piece of a Package.swift"),
    ]

    /// Single lines no snippet can hold, and why.
    static let uncompiledLines: [(document: String, line: String, reason: String)] = [
        ("Concurrency.md", "@main", "the test runner is the test module's entry point")
    ]

    // MARK: The checks

    @Test func everySnippetIsCodeItsDocumentShows() throws {
        let blocks = try Self.blocks()
        let snippets = try Self.snippets()
        #expect(snippets.count > 100, "the check must see the snippets, found \(snippets.count)")
        for snippet in snippets {
            let ofDocument = blocks.filter { $0.document == snippet.document }
            #expect(!ofDocument.isEmpty, "\(snippet.place): no document \(snippet.document)")
            guard !ofDocument.isEmpty else { continue }
            if !ofDocument.contains(where: { !Self.occurrences(of: snippet.lines, in: $0.lines).isEmpty }) {
                Issue.record(
                    "\(snippet.place): not in any block of \(snippet.document) as written there:\n\(snippet.lines.joined(separator: "\n"))"
                )
            }
        }
    }

    @Test func everyBlockOfEveryDocumentIsCompiled() throws {
        let blocks = try Self.blocks()
        #expect(blocks.count > 100, "the check must see the documents' blocks, found \(blocks.count)")
        let uncovered = Self.uncovered(blocks, by: try Self.snippets())
        if !uncovered.isEmpty {
            let lines = uncovered.map { "\($0.block.document):\($0.block.line): \($0.line)" }
            Issue.record("\(lines.count) lines no snippet compiles:\n\(lines.joined(separator: "\n"))")
        }
    }

    /// The check itself: a snippet that drifted from its document, and a block nothing compiles, are found.
    @Test func theChecksFindADriftedSnippetAndAnUncompiledBlock() {
        let block = Block(
            document: "Test.md", line: 1,
            lines: ["let store = try AccountStore<Token>()", "try store.save(token, for: \"ann\")"],
            isBuilt: false)
        let drifted = ["let store = try AccountStore<Token>()", "try store.save(for: \"ann\", token)"]
        #expect(Self.occurrences(of: drifted, in: block.lines).isEmpty)
        let half = Snippet(place: "here", document: "Test.md", lines: [block.lines[0]])
        #expect(Self.uncovered([block], by: [half]).map(\.line) == [block.lines[1]])
        let whole = Snippet(place: "here", document: "Test.md", lines: block.lines)
        #expect(Self.uncovered([block], by: [whole]).isEmpty)
    }

    // MARK: Matching

    /// Where `lines` occur, one after another, in `block`: the index of each occurrence's first line.
    static func occurrences(of lines: [String], in block: [String]) -> [Int] {
        guard !lines.isEmpty, lines.count <= block.count else { return [] }
        return (0...(block.count - lines.count)).filter { Array(block[$0..<($0 + lines.count)]) == lines }
    }

    /// The lines of `blocks` that neither a snippet nor a built package covers.
    static func uncovered(_ blocks: [Block], by snippets: [Snippet]) -> [(block: Block, line: String)] {
        let built = blocks.filter(\.isBuilt)
        var found: [(block: Block, line: String)] = []
        for block in blocks where !block.isBuilt && !isExempt(block) {
            var covered = [Bool](repeating: false, count: block.lines.count)
            for snippet in snippets where snippet.document == block.document {
                for start in occurrences(of: snippet.lines, in: block.lines) {
                    for index in start..<(start + snippet.lines.count) { covered[index] = true }
                }
            }
            // A line of a package that .ci/readme-packages builds is compiled there.
            for (index, line) in block.lines.enumerated() where built.contains(where: { $0.lines.contains(line) }) {
                covered[index] = true
            }
            for (index, line) in block.lines.enumerated()
            where uncompiledLines.contains(where: { $0.document == block.document && $0.line == line }) {
                covered[index] = true
            }
            found += zip(block.lines, covered).filter { !$0.1 }.map { (block, $0.0) }
        }
        return found
    }

    static func isExempt(_ block: Block) -> Bool {
        uncompiled.contains { $0.document == block.document && block.lines.first?.hasPrefix($0.firstLine) == true }
    }

    // MARK: Reading

    /// README.md's and every DocC article's fenced `swift` blocks.
    static func blocks() throws -> [Block] {
        let articles = root.appendingPathComponent("Sources/Errand/Errand.docc")
        let names = try FileManager.default.contentsOfDirectory(atPath: articles.path).filter { $0.hasSuffix(".md") }
        #expect(names.count > 20, "the check must see the articles, found \(names.count)")
        var found = try blocks(of: "README.md", in: root.appendingPathComponent("README.md"))
        for name in names.sorted() {
            found += try blocks(of: name, in: articles.appendingPathComponent(name))
        }
        return found
    }

    static func blocks(of document: String, in file: URL) throws -> [Block] {
        let lines = try String(contentsOf: file, encoding: .utf8).components(separatedBy: "\n")
        var blocks: [Block] = []
        var index = 0
        var marked = false
        while index < lines.count {
            let line = lines[index].trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("<!-- package: ") { marked = true }
            guard line.hasPrefix("```") else {
                index += 1
                continue
            }
            let end = lines[(index + 1)...].firstIndex { $0.trimmingCharacters(in: .whitespaces).hasPrefix("```") }
            let last = end ?? lines.count
            if line == "```swift" {
                blocks.append(
                    Block(
                        document: document, line: index + 1, lines: significant(lines[(index + 1)..<last]),
                        isBuilt: marked))
            }
            marked = false
            index = last + 1
        }
        return blocks
    }

    /// Every snippet in this folder's Swift files.
    static func snippets() throws -> [Snippet] {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        var snippets: [Snippet] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        where name.hasSuffix(".swift") {
            let lines = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
                .components(separatedBy: "\n")
            var open: (document: String, start: Int)?
            for (index, line) in lines.enumerated() {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if trimmed.hasPrefix("// snippet: ") {
                    open = (String(trimmed.dropFirst("// snippet: ".count)), index + 1)
                } else if trimmed == "// end snippet", let started = open {
                    snippets.append(
                        Snippet(
                            place: "\(name):\(started.start)", document: started.document,
                            lines: significant(lines[started.start..<index])))
                    open = nil
                }
            }
            #expect(open == nil, "\(name): a snippet is not ended")
        }
        return snippets
    }

    /// Lines without their indentation, blank ones left out.
    static func significant(_ lines: ArraySlice<String>) -> [String] {
        lines.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}
