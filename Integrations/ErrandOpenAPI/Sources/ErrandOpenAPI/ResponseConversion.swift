import Errand
import Foundation
import HTTPTypes
import OpenAPIRuntime

/// An Errand response as the runtime's types: the head as `HTTPResponse`, the body as `HTTPBody`.
enum ResponseConversion {
    /// The status and header fields of `response`, its `Content-Length` the `bodyLength` of the
    /// body it comes with when that is known (a refused status's, read whole), left out when the
    /// body was decoded (`Content-Encoding`), whose length the field does not count.
    /// - Throws: ``ErrandError/serialization(_:)`` for a status outside 100–999.
    static func head(of response: Response, bodyLength: Int? = nil) throws(ErrandError) -> HTTPResponse {
        guard (100...999).contains(response.statusCode) else {
            throw .serialization("the server answered with status \(response.statusCode), which HTTP does not have")
        }
        let countsTheBody = bodyLength == nil && response.value(forHeader: "Content-Encoding") == nil
        var fields = HTTPFields()
        for (name, value) in response.headers.sorted(by: { $0.key < $1.key }) {
            guard let fieldName = HTTPField.Name(name), fieldName != .contentLength || countsTheBody else { continue }
            let values = fieldName == .setCookie ? setCookieValues(value) : [value]
            for value in values { fields.append(HTTPField(name: fieldName, value: value)) }
        }
        if let bodyLength { fields[.contentLength] = String(bodyLength) }
        return HTTPResponse(status: .init(code: response.statusCode), headerFields: fields)
    }

    /// The streaming body; `nil` for methods whose response has none.
    static func body(of stream: ResponseStream, method: HTTPRequest.Method) -> HTTPBody? {
        guard hasBody(method) else {
            stream.cancel()
            return nil
        }
        return HTTPBody(
            stream.map { ArraySlice($0) }, length: length(of: stream.response), iterationBehavior: .single)
    }

    /// A body already read: a refused status's, kept whole.
    static func body(of data: Data, method: HTTPRequest.Method) -> HTTPBody? {
        hasBody(method) ? HTTPBody(data) : nil
    }

    private static func hasBody(_ method: HTTPRequest.Method) -> Bool {
        method != .head && method != .connect
    }

    private static func length(of response: Response) -> HTTPBody.Length {
        // A decoded (gzip) body's length is not the field's.
        guard response.value(forHeader: "Content-Encoding") == nil,
            let text = response.value(forHeader: "Content-Length"), let length = Int64(text), length >= 0
        else { return .unknown }
        return .known(length)
    }

    /// `Set-Cookie` values Errand joined with commas, apart again: a comma starts a new cookie
    /// where a `name=` follows it, and not inside an `Expires` date (`Wed, 21 Oct 2026 …`).
    static func setCookieValues(_ joined: String) -> [String] {
        var values: [String] = []
        var current = Substring(joined)[...]
        var searchStart = current.startIndex
        while let comma = current[searchStart...].firstIndex(of: ",") {
            let rest = current[current.index(after: comma)...].drop { $0 == " " || $0 == "\t" }
            if let equals = rest.firstIndex(of: "="), equals > rest.startIndex,
                rest[..<equals].allSatisfy({ isTokenCharacter($0) })
            {
                values.append(String(current[..<comma]))
                current = rest
                searchStart = current.startIndex
            } else {
                searchStart = current.index(after: comma)
            }
        }
        values.append(String(current))
        return values
    }

    private static func isTokenCharacter(_ character: Character) -> Bool {
        guard let ascii = character.asciiValue, ascii > 0x20, ascii < 0x7F else { return false }
        return !"\"(),/:;<=>?@[\\]{}".contains(character)
    }
}
