import Foundation

/// A request argument checked and normalised once, so that the query string, the form body and
/// the JSON body are all written from the same value, keys sorted.
enum ArgumentValue {
    case string(String)
    /// A number already in its canonical text form (`42`, `1.5`).
    case number(String)
    case bool(Bool)
    case null
    case array([ArgumentValue])
    /// Keys sorted.
    case object([(key: String, value: ArgumentValue)])

    /// Normalises a request's arguments, naming the offending key path when a value is not encodable.
    static func object(_ arguments: [String: any Sendable]) throws(ErrandError) -> ArgumentValue {
        try ArgumentValue(arguments, path: "arguments")
    }

    private static let booleanClass = ObjectIdentifier(type(of: NSNumber(value: true)))

    private init(_ value: Any, path: String) throws(ErrandError) {
        switch value {
        case let bool as Bool where type(of: value) == Bool.self:
            self = .bool(bool)
        case let string as String:
            self = .string(string)
        case let string as Substring:
            self = .string(String(string))
        case let number as NSNumber where type(of: value) is NSNumber.Type:
            self =
                ObjectIdentifier(type(of: number)) == Self.booleanClass
                ? .bool(number.boolValue) : try Self.number(number.doubleValue, text: number.stringValue, path: path)
        case let integer as any BinaryInteger:
            self = .number(String(describing: integer))
        case let double as Double:
            self = try Self.number(double, text: String(describing: double), path: path)
        case let float as Float:
            self = try Self.number(Double(float), text: String(describing: float), path: path)
        case let decimal as Decimal:
            self = .number(decimal.description)
        case is NSNull:
            self = .null
        case let url as URL:
            self = .string(url.absoluteString)
        case let uuid as UUID:
            self = .string(uuid.uuidString)
        case let array as [Any]:
            var elements: [ArgumentValue] = []
            for (index, element) in array.enumerated() {
                elements.append(try ArgumentValue(element, path: "\(path)[\(index)]"))
            }
            self = .array(elements)
        case let dictionary as [String: Any]:
            var pairs: [(key: String, value: ArgumentValue)] = []
            for key in dictionary.keys.sorted() {
                pairs.append((key, try ArgumentValue(dictionary[key] as Any, path: "\(path).\(key)")))
            }
            self = .object(pairs)
        default:
            let mirror = Mirror(reflecting: value)
            guard mirror.displayStyle == .optional else {
                throw .serialization("\(path) has a value of unsupported type \(type(of: value))")
            }
            if let wrapped = mirror.children.first?.value {
                try self.init(wrapped, path: path)
            } else {
                self = .null
            }
        }
    }

    private static func number(_ value: Double, text: String, path: String) throws(ErrandError) -> ArgumentValue {
        guard value.isFinite else { throw .serialization("\(path) is \(text), which JSON and URLs cannot carry") }
        return .number(text)
    }

    // MARK: Rendering

    /// Compact JSON with sorted keys: the same arguments always give the same bytes.
    var json: String {
        switch self {
        case .string(let string): Self.jsonQuoted(string)
        case .number(let text): text
        case .bool(let bool): bool ? "true" : "false"
        case .null: "null"
        case .array(let elements): "[" + elements.map(\.json).joined(separator: ",") + "]"
        case .object(let pairs): "{" + pairs.map { Self.jsonQuoted($0.key) + ":" + $0.value.json }.joined(separator: ",") + "}"
        }
    }

    /// `application/x-www-form-urlencoded` text, also used as a query string: `a=1&b%5B%5D=x&b%5B%5D=y`.
    ///
    /// Nested values follow the bracket convention of Rails, PHP and Alamofire (`key[]=`, `key[sub]=`);
    /// booleans are `1` and `0`, as YTKNetwork and Alamofire send them.
    var formEncoded: String {
        formPairs(prefix: nil).map { "\(Self.percentEncoded($0.0))=\(Self.percentEncoded($0.1))" }.joined(separator: "&")
    }

    private func formPairs(prefix: String?) -> [(String, String)] {
        let key = prefix ?? ""
        switch self {
        case .string(let string): return [(key, string)]
        case .number(let text): return [(key, text)]
        case .bool(let bool): return [(key, bool ? "1" : "0")]
        case .null: return [(key, "")]
        case .array(let elements): return elements.flatMap { $0.formPairs(prefix: key + "[]") }
        case .object(let pairs):
            return pairs.flatMap { pair in pair.value.formPairs(prefix: prefix.map { "\($0)[\(pair.key)]" } ?? pair.key) }
        }
    }

    /// RFC 3986 unreserved characters pass; everything else, `+`, `&`, `=` and `/` included, is escaped.
    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    static func percentEncoded(_ string: String) -> String {
        string.addingPercentEncoding(withAllowedCharacters: unreserved) ?? string
    }

    private static func jsonQuoted(_ string: String) -> String {
        var quoted = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": quoted += "\\\""
            case "\\": quoted += "\\\\"
            case "\n": quoted += "\\n"
            case "\r": quoted += "\\r"
            case "\t": quoted += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                quoted += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: quoted.unicodeScalars.append(scalar)
            }
        }
        return quoted + "\""
    }
}
