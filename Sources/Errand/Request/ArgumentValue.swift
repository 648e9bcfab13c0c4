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
        do {
            return try object(arguments.map { ($0.key, $0.value as Any) })
        } catch {
            let path = "arguments" + error.reversedPath.reversed().joined()
            throw .serialization("\(path) \(error.problem)")
        }
    }

    /// A value that cannot be encoded; its path is collected on the way back up, so encodable
    /// arguments cost no path strings.
    private struct Unencodable: Error {
        var reversedPath: [String] = []
        let problem: String

        func within(_ component: String) -> Unencodable {
            var outer = self
            outer.reversedPath.append(component)
            return outer
        }
    }

    /// Swift's own types are matched first and exactly: a cast to `NSNumber` or `NSNull`
    /// would bridge a whole dictionary or array to Foundation just to fail.
    private init(_ value: Any) throws(Unencodable) {
        switch value {
        case let string as String:
            self = .string(string)
        case let integer as Int where type(of: value) == Int.self:
            self = .number(String(integer))
        case let dictionary as [String: any Sendable]:
            self = try Self.object(dictionary.map { ($0.key, $0.value as Any) })
        case let array as [any Sendable]:
            self = try Self.array(array.map { $0 as Any })
        case let bool as Bool where type(of: value) == Bool.self:
            self = .bool(bool)
        case let integer as any BinaryInteger:
            self = .number(String(describing: integer))
        case let double as Double where type(of: value) == Double.self:
            self = try Self.number(double, text: String(describing: double))
        case let float as Float where type(of: value) == Float.self:
            self = try Self.number(Double(float), text: String(describing: float))
        case let number as NSNumber:
            self =
                number.isBoolean
                ? .bool(number.boolValue) : try Self.number(number.doubleValue, text: number.stringValue)
        case let string as Substring:
            self = .string(String(string))
        case let decimal as Decimal:
            self = .number(decimal.description)
        case is NSNull:
            self = .null
        case let url as URL:
            self = .string(url.absoluteString)
        case let uuid as UUID:
            self = .string(uuid.uuidString)
        case let dictionary as [String: Any]:
            self = try Self.object(dictionary.map { ($0.key, $0.value) })
        case let array as [Any]:
            self = try Self.array(array)
        default:
            let mirror = Mirror(reflecting: value)
            guard mirror.displayStyle == .optional else {
                throw Unencodable(problem: "has a value of unsupported type \(type(of: value))")
            }
            if let wrapped = mirror.children.first?.value {
                try self.init(wrapped)
            } else {
                self = .null
            }
        }
    }

    private static func object(_ pairs: [(String, Any)]) throws(Unencodable) -> ArgumentValue {
        var normalised: [(key: String, value: ArgumentValue)] = []
        for (key, value) in pairs.sorted(by: { $0.0 < $1.0 }) {
            do {
                normalised.append((key, try ArgumentValue(value)))
            } catch {
                throw error.within("." + key)
            }
        }
        return .object(normalised)
    }

    private static func array(_ elements: [Any]) throws(Unencodable) -> ArgumentValue {
        var normalised: [ArgumentValue] = []
        for (index, element) in elements.enumerated() {
            do {
                normalised.append(try ArgumentValue(element))
            } catch {
                throw error.within("[\(index)]")
            }
        }
        return .array(normalised)
    }

    private static func number(_ value: Double, text: String) throws(Unencodable) -> ArgumentValue {
        guard value.isFinite else { throw Unencodable(problem: "is \(text), which JSON and URLs cannot carry") }
        return .number(text)
    }

    // MARK: Rendering
    //
    // Both renderings write UTF-8 bytes into one buffer: building them from many small strings
    // cost several times more.

    /// Compact JSON with sorted keys: the same arguments always give the same bytes.
    var json: String {
        var output: [UInt8] = []
        writeJSON(to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    private func writeJSON(to output: inout [UInt8]) {
        switch self {
        case .string(let string): Self.writeJSONString(string, to: &output)
        case .number(let text): output += text.utf8
        case .bool(let bool): output += (bool ? "true" : "false").utf8
        case .null: output += "null".utf8
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                element.writeJSON(to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let pairs):
            output.append(UInt8(ascii: "{"))
            for (index, pair) in pairs.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                Self.writeJSONString(pair.key, to: &output)
                output.append(UInt8(ascii: ":"))
                pair.value.writeJSON(to: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    /// Quotes and escapes `string`; bytes of multi-byte characters pass through as UTF-8.
    private static func writeJSONString(_ string: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): output += [UInt8(ascii: "\\"), byte]
            case UInt8(ascii: "\n"): output += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case UInt8(ascii: "\r"): output += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case UInt8(ascii: "\t"): output += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0..<0x20: output += Array("\\u00".utf8) + [hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0x0F)]]
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }

    /// `application/x-www-form-urlencoded` text, also used as a query string: `a=1&b%5B%5D=x&b%5B%5D=y`.
    ///
    /// Nested values follow the bracket convention of Rails, PHP and Alamofire (`key[]=`, `key[sub]=`);
    /// booleans are `1` and `0`, as YTKNetwork and Alamofire send them.
    var formEncoded: String {
        var output: [UInt8] = []
        forEachFormField { name, value in
            if !output.isEmpty { output.append(UInt8(ascii: "&")) }
            Self.writePercentEncoded(name, to: &output)
            output.append(UInt8(ascii: "="))
            Self.writePercentEncoded(value, to: &output)
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Visits the leaves as form fields, in key order, named by the bracket convention
    /// (`a`, `b[]`, `c[d]`), booleans as `1` and `0`, null as empty: the form body, the query
    /// string and multipart fields all come from here.
    func forEachFormField(named key: String? = nil, _ body: (_ name: String, _ value: String) -> Void) {
        switch self {
        case .string(let string): body(key ?? "", string)
        case .number(let text): body(key ?? "", text)
        case .bool(let bool): body(key ?? "", bool ? "1" : "0")
        case .null: body(key ?? "", "")
        case .array(let elements):
            for element in elements { element.forEachFormField(named: (key ?? "") + "[]", body) }
        case .object(let pairs):
            for (name, value) in pairs { value.forEachFormField(named: key.map { "\($0)[\(name)]" } ?? name, body) }
        }
    }

    /// RFC 3986 unreserved characters pass; every other UTF-8 byte, `+`, `&`, `=` and `/`
    /// included, becomes `%XX`.
    private static func writePercentEncoded(_ string: String, to output: inout [UInt8]) {
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                output.append(byte)
            default:
                output.append(UInt8(ascii: "%"))
                output.append(hexDigits[Int(byte >> 4)])
                output.append(hexDigits[Int(byte & 0x0F)])
            }
        }
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)
}
