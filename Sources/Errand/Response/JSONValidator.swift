import Foundation

/// The shape a JSON response must have, checked after the status code.
///
/// Write it as a literal: `["nick": .string, "level": .number]` is an object with those keys,
/// `[.string]` an array of strings, `[]` any array. Keys must be present unless wrapped in
/// ``optional(_:)``; extra keys pass. `null` matches only ``null``, ``any`` and ``optional(_:)``.
///
/// ```swift
/// var jsonValidator: JSONValidator? {
///     ["question": ["id": .number, "content": .string, "tags": [.string], "answer": .optional(.string)]]
/// }
/// ```
///
/// A mismatch fails the request with ``ErrandError/jsonValidation(path:expected:found:)``,
/// naming the path of the first offending value, such as `$.question.content`.
public indirect enum JSONValidator: Sendable, Equatable {
    /// A JSON string.
    case string
    /// A JSON number (not a boolean).
    case number
    /// A JSON `true` or `false`.
    case bool
    /// JSON `null`.
    case null
    /// Any value, including `null`.
    case any
    /// An object whose listed keys match their validators; extra keys pass.
    case object([String: JSONValidator])
    /// An array each of whose elements matches the validator.
    case array(JSONValidator)
    /// The validator, or `null`, or — inside an object — a missing key.
    case optional(JSONValidator)

    /// The first mismatch between `json` (as produced by `JSONSerialization`) and this
    /// validator, as a ``ErrandError/jsonValidation(path:expected:found:)``; `nil` when it matches.
    public func validate(_ json: Any?) -> ErrandError? {
        guard let mismatch = mismatch(with: JSONKind(json)) else { return nil }
        let path = "$" + mismatch.reversedPath.reversed().joined()
        return .jsonValidation(path: path, expected: mismatch.expected, found: mismatch.found)
    }

    /// A mismatch found deep in the document; the path is collected on the way back up, so a
    /// document that matches costs no string building.
    private struct Mismatch {
        var reversedPath: [String] = []
        let expected: String
        let found: String
    }

    private func mismatch(with value: JSONKind) -> Mismatch? {
        switch (self, value) {
        case (.any, _), (.optional, .null), (.optional, .missing):
            return nil
        case (.optional(let wrapped), _):
            return wrapped.mismatch(with: value)
        case (.string, .string), (.number, .number), (.bool, .bool), (.null, .null):
            return nil
        case (.object(let fields), .object(let object)):
            // The failure reported is the one under the first key in sorted order, so the message
            // never depends on hashing order; finding it needs no sort.
            var first: (key: String, failure: Mismatch)?
            for (key, validator) in fields {
                if let current = first, current.key < key { continue }
                if let failure = validator.mismatch(with: object[key].map(JSONKind.init) ?? .missing) {
                    first = (key, failure)
                }
            }
            guard var failure = first?.failure, let key = first?.key else { return nil }
            failure.reversedPath.append(Self.pathComponent(key))
            return failure
        case (.array(let element), .array(let array)):
            for (index, item) in array.enumerated() {
                if var failure = element.mismatch(with: JSONKind(item)) {
                    failure.reversedPath.append("[\(index)]")
                    return failure
                }
            }
            return nil
        default:
            return Mismatch(expected: expectation, found: value.name)
        }
    }

    /// What this validator accepts, in words, for error messages.
    var expectation: String {
        switch self {
        case .string: "string"
        case .number: "number"
        case .bool: "bool"
        case .null: "null"
        case .any: "any value"
        case .object: "object"
        case .array: "array"
        case .optional(let wrapped): "\(wrapped.expectation) or null"
        }
    }

    /// `.key` for identifier-like keys, `["key"]` for any other, as in JSONPath.
    private static func pathComponent(_ key: String) -> String {
        let isIdentifier =
            !key.isEmpty && !(key.first?.isNumber ?? true)
            && key.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }
        if isIdentifier { return "." + key }
        let escaped = key.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        return "[\"\(escaped)\"]"
    }
}

extension JSONValidator: ExpressibleByDictionaryLiteral {
    /// An ``object(_:)`` validator. A repeated key keeps its last validator.
    public init(dictionaryLiteral elements: (String, JSONValidator)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension JSONValidator: ExpressibleByArrayLiteral {
    /// An ``array(_:)`` validator: `[]` accepts any array, `[v]` an array of elements matching `v`.
    /// As in YTKNetwork, only the first element validator is used.
    public init(arrayLiteral elements: JSONValidator...) {
        self = .array(elements.first ?? .any)
    }
}

extension JSONValidator {
    /// A JSON value reduced to what validation needs.
    fileprivate enum JSONKind {
        case string, number, bool, null, missing, other
        case object([String: Any])
        case array([Any])

        /// Foundation's parser hands out `NSNumber`s, found by their type first; then strings and
        /// collections: a cast to a Foundation class (`NSNull`, `NSNumber`) would bridge a whole
        /// string or dictionary just to fail.
        init(_ value: Any?) {
            if let value, type(of: value) is NSNumber.Type, let number = value as? NSNumber {
                self = number.isBoolean ? .bool : .number
                return
            }
            switch value {
            case nil: self = .null
            case is String: self = .string
            case let object as [String: Any]: self = .object(object)
            case let array as [Any]: self = .array(array)
            case let bool? where type(of: bool) == Bool.self: self = .bool
            case is NSNull: self = .null
            case let number as NSNumber:
                self = number.isBoolean ? .bool : .number
            default: self = .other
            }
        }

        var name: String {
            switch self {
            case .string: "string"
            case .number: "number"
            case .bool: "bool"
            case .null: "null"
            case .missing: "missing"
            case .other: "unknown value"
            case .object: "object"
            case .array: "array"
            }
        }
    }
}
