import Foundation

// MARK: Multipart bodies and nested field names

extension Redaction {
    /// Whether a form field or multipart part named `name` is masked in a body: a query item's
    /// or JSON field's name, or a JSON field's name as the innermost key of a nested argument
    /// (`account[password]`), for JSON field names match at any depth.
    func masksBodyField(_ name: String) -> Bool {
        queryItems.contains(name) || jsonFields.contains(name) || jsonFields.contains(Self.innermostKey(of: name))
    }

    /// `password` for `account[password]` (and `a[b][password]`); the name itself when it has no key.
    static func innermostKey(of name: String) -> String {
        guard name.hasSuffix("]"), let open = name.lastIndex(of: "[") else { return name }
        return String(name[name.index(after: open)..<name.index(before: name.endIndex)])
    }

    /// A `multipart/form-data` body with the content of each part whose name is masked (see
    /// ``masksBodyField(_:)``) replaced, headers and boundaries kept; the contents taken out are
    /// added to `masked`. A body cut short masks a part cut short to its end.
    func multipartBody(_ data: Data, boundary: String, masked: inout [String]) -> Data {
        let delimiter = Data("--\(boundary)".utf8)
        let partDelimiter = Data("\r\n--\(boundary)".utf8)
        let headersEnd = Data("\r\n\r\n".utf8)
        guard let first = data.range(of: delimiter) else { return data }
        var output = Data(data[..<first.upperBound])
        var position = first.upperBound
        while position < data.endIndex {
            guard let headers = data.range(of: headersEnd, in: position..<data.endIndex) else { break }
            let content = headers.upperBound
            let next = data.range(of: partDelimiter, in: content..<data.endIndex)
            let contentEnd = next?.lowerBound ?? data.endIndex
            output += data[position..<content]
            if let name = Self.partName(String(decoding: data[position..<headers.lowerBound], as: UTF8.self)),
                masksBodyField(name)
            {
                if let value = String(data: data[content..<contentEnd], encoding: .utf8) { masked.append(value) }
                output += Data(Self.placeholder.utf8)
            } else {
                output += data[content..<contentEnd]
            }
            guard let next else {
                position = data.endIndex
                break
            }
            output += data[next]
            position = next.upperBound
        }
        output += data[position...]
        return output
    }

    /// The boundary a `multipart/form-data` content type names, unquoted; `nil` for another type.
    static func multipartBoundary(of mimeType: String) -> String? {
        guard mimeType.lowercased().hasPrefix("multipart/form-data") else { return nil }
        for parameter in mimeType.splitScalars(";").dropFirst() {
            let pair = parameter.splitScalars("=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "boundary" else {
                continue
            }
            let value = pair[1].trimmingCharacters(in: .whitespaces)
            let unquoted =
                value.hasPrefix("\"") && value.hasSuffix("\"") && value.count >= 2
                ? String(value.dropFirst().dropLast()) : value
            return unquoted.isEmpty ? nil : unquoted
        }
        return nil
    }

    /// The `name` of a part's `Content-Disposition`, in the part's header block.
    private static func partName(_ headers: String) -> String? {
        for line in headers.split(separator: "\r\n") {
            let field = line.split(separator: ":", maxSplits: 1)
            guard field.count == 2, field[0].trimmingCharacters(in: .whitespaces).lowercased() == "content-disposition"
            else { continue }
            for parameter in field[1].split(separator: ";").dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1)
                guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "name" else {
                    continue
                }
                let value = pair[1].trimmingCharacters(in: .whitespaces)
                return value.hasPrefix("\"") && value.hasSuffix("\"") && value.count >= 2
                    ? String(value.dropFirst().dropLast()) : value
            }
        }
        return nil
    }
}
