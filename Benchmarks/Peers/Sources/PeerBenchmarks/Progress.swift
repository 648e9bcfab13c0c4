import Foundation

/// Writes `line` to standard error, so that standard output holds only the tables.
func progress(_ line: String) {
    FileHandle.standardError.write(Data("\(line)\n".utf8))
}
