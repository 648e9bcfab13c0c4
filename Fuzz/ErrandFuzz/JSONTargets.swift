import Errand
import Foundation

/// `JSONSyntax` against `JSONSerialization`: whatever it calls certainly valid, Foundation must
/// parse. (Its `false` means "not certain", and Foundation decides those.)
enum JSONSyntaxTarget {
    static func run(_ data: Data) {
        let certain = JSONSyntax.isCertainlyValid(data)
        let parsed = (try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])) != nil
        require(
            !certain || parsed,
            "JSONSyntax called \(String(decoding: data, as: UTF8.self)) valid; Foundation refused it")
    }
}

/// `JSONValidator` over documents Foundation parsed, with validators built from the input. Its
/// verdict must be a plain reading of the validator's rules, and a mismatch's path must start at `$`.
enum JSONValidatorTarget {
    static func run(_ data: Data) {
        var input = FuzzInput(data)
        let validator = makeValidator(&input, depth: 0)
        let document = Data(input.rest())
        guard let json = try? JSONSerialization.jsonObject(with: document, options: [.fragmentsAllowed]) else { return }
        let error = validator.validate(json)
        require((error == nil) == matches(validator, json), "\(validator) on \(json): \(String(describing: error))")
        if let error {
            guard case .jsonValidation(let path, _, _) = error else { fatalError("unexpected error \(error)") }
            require(path.hasPrefix("$"), "path \(path)")
        }
        require(JSONValidator.any.validate(json) == nil, "any refused \(json)")
        require(JSONValidator.optional(validator).validate(NSNull()) == nil, "optional refused null")
    }

    private static let keys = ["a", "b", "id", "name", "x y", "", "0", "é", "a\"b"]

    private static func makeValidator(_ input: inout FuzzInput, depth: Int) -> JSONValidator {
        let choice = Int(input.byte()) % (depth < 4 ? 8 : 5)
        switch choice {
        case 0: return .string
        case 1: return .number
        case 2: return .bool
        case 3: return .null
        case 4: return .any
        case 5: return .array(makeValidator(&input, depth: depth + 1))
        case 6: return .optional(makeValidator(&input, depth: depth + 1))
        default:
            var fields: [String: JSONValidator] = [:]
            for _ in 0..<Int(input.byte()) % 4 {
                fields[keys[Int(input.byte()) % keys.count]] = makeValidator(&input, depth: depth + 1)
            }
            return .object(fields)
        }
    }

    /// The rules as the documentation gives them. `missing` is a key absent from its object.
    private static func matches(_ validator: JSONValidator, _ value: Any?, missing: Bool = false) -> Bool {
        let isNull = value == nil || value is NSNull
        switch validator {
        case .any: return true
        case .optional(let wrapped): return missing || isNull || matches(wrapped, value)
        case _ where missing: return false
        case .null: return isNull
        case .string: return value is String
        case .bool: return (value as? NSNumber).map(isBoolean) ?? false
        case .number: return !(value is String) && ((value as? NSNumber).map { !isBoolean($0) } ?? false)
        case .array(let element):
            guard let array = value as? [Any] else { return false }
            return array.allSatisfy { matches(element, $0) }
        case .object(let fields):
            guard let object = value as? [String: Any] else { return false }
            return fields.allSatisfy { key, field in matches(field, object[key], missing: object[key] == nil) }
        }
    }

    /// The subclass Foundation gives the booleans it parses.
    private static let booleanType = type(of: NSNumber(value: true))

    private static func isBoolean(_ number: NSNumber) -> Bool {
        type(of: number) == booleanType
    }
}
