import Foundation

/// One test of the http-state group's cookie parser suite, read from its folder the way the
/// group's harness (`tools/testserver/testserver.py`) read it: the header fields of `NAME-test`
/// and the `Cookie` value `NAME-expected` names. Bytes stay bytes, as they did in Python 2: the
/// files hold UTF-8, a NUL and a bare CR that a client must meet exactly as written.
struct CookieParserCase {
    /// The test's name, what follows the `?` of `/cookie-parser?NAME`.
    let name: String
    /// `NAME-test` as it is, which a `FAIL` answer quotes.
    let testFile: [UInt8]
    /// `NAME-test`'s path, which a "not found" answer names.
    let testPath: String
    /// `NAME-expected`'s path.
    let expectedPath: String

    /// The test `name` of `folder`; `nil` when `name` could reach outside the folder. The files
    /// are read when asked for: a missing one is the harness's 404, not a failure here.
    init?(name: String, folder: URL) {
        // The harness joined the name to its folder as it came; a name that is not one file's
        // stem would reach other files.
        guard !name.isEmpty, name != ".", name != "..", !name.contains("/"), !name.contains("\0") else { return nil }
        self.name = name
        testPath = folder.appendingPathComponent(name + "-test").path
        expectedPath = folder.appendingPathComponent(name + "-expected").path
        testFile = FileManager.default.contents(atPath: testPath).map { Array($0) } ?? []
    }

    /// Whether `NAME-test` exists, as `os.path.isfile` asks.
    var hasTestFile: Bool {
        Self.isFile(testPath)
    }

    /// The header fields `NAME-test` lists, one a line, in order; `nil` when a line is no field,
    /// where the harness raised an exception with its answer half sent.
    var fields: [(name: [UInt8], value: [UInt8])]? {
        var fields: [(name: [UInt8], value: [UInt8])] = []
        for line in Self.lines(testFile) {
            guard let field = Self.field(in: line) else { return nil }
            fields.append((Array(field.name), Array(field.value)))
        }
        return fields
    }

    /// The `Cookie` value `NAME-expected` names: `.some(nil)` when it names none or more than one,
    /// as a client should then send no `Cookie` at all; `nil` when there is no such file.
    var expectedCookie: [UInt8]?? {
        guard Self.isFile(expectedPath), let data = FileManager.default.contents(atPath: expectedPath) else {
            return nil
        }
        let values = Self.cookieValues(in: Array(data)[...])
        return .some(values.count == 1 ? Array(values[0]) : nil)
    }

    // MARK: The harness's regular expressions, on bytes

    /// Python 2's `\s` for a byte string: space, tab, LF, CR, FF and VT, nothing else.
    static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || (0x09...0x0D).contains(byte)
    }

    /// The lines of `bytes` as iterating a Python file yields them: split after each LF, which
    /// each line but perhaps the last keeps.
    static func lines(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        var lines: [ArraySlice<UInt8>] = []
        var start = bytes.startIndex
        while start < bytes.endIndex {
            let end = bytes[start...].firstIndex(of: 0x0A).map { $0 + 1 } ?? bytes.endIndex
            lines.append(bytes[start..<end])
            start = end
        }
        return lines
    }

    /// The first match of `(\S+):\s*(.*)` in `line`, as `re.findall(...)[0]` finds it: the name
    /// is the first run of non-space bytes up to its last colon (`\S+` is greedy), the value what
    /// follows that colon and any spaces, up to the LF. Trailing spaces and a CR stay in it.
    static func field(in line: ArraySlice<UInt8>) -> (name: ArraySlice<UInt8>, value: ArraySlice<UInt8>)? {
        var start = line.startIndex
        while start < line.endIndex {
            guard !isSpace(line[start]) else {
                start += 1
                continue
            }
            let runEnd = line[start...].firstIndex(where: isSpace) ?? line.endIndex
            // A later start in the same run sees a subset of these colons: none either.
            guard let colon = line[(start + 1)..<runEnd].lastIndex(of: 0x3A) else {
                start = runEnd
                continue
            }
            var valueStart = colon + 1
            while valueStart < line.endIndex && isSpace(line[valueStart]) { valueStart += 1 }
            let valueEnd = line[valueStart...].firstIndex(of: 0x0A) ?? line.endIndex
            return (line[start..<colon], line[valueStart..<valueEnd])
        }
        return nil
    }

    /// Every match of `Cookie:\s*(.*)` in `data`, as `re.findall` finds them: after `Cookie:` and
    /// any spaces — line ends included — the rest of the line. `Set-Cookie:` matches too.
    static func cookieValues(in data: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
        let marker = Array("Cookie:".utf8)
        var values: [ArraySlice<UInt8>] = []
        var index = data.startIndex
        while let found = data[index...].firstRange(of: marker) {
            var valueStart = found.upperBound
            while valueStart < data.endIndex && isSpace(data[valueStart]) { valueStart += 1 }
            let valueEnd = data[valueStart...].firstIndex(of: 0x0A) ?? data.endIndex
            values.append(data[valueStart..<valueEnd])
            index = valueEnd
        }
        return values
    }

    private static func isFile(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue
    }
}
