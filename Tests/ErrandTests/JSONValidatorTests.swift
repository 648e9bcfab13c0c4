import Errand
import Foundation
import Testing

@Suite("JSONValidator")
struct JSONValidatorTests {
    func json(_ text: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
    }

    @Test func matchingDocumentPasses() throws {
        let validator: JSONValidator = [
            "nick": .string, "level": .number, "vip": .bool, "tags": [.string], "extra": .any, "gone": .null,
            "profile": ["city": .optional(.string)],
        ]
        let document = try json(
            #"{"nick":"ann","level":3,"vip":false,"tags":["a"],"extra":{"x":1},"gone":null,"profile":{},"unlisted":1}"#)
        #expect(validator.validate(document) == nil)
    }

    @Test func mismatchNamesPathExpectationAndFinding() throws {
        let validator: JSONValidator = ["question": ["id": .number, "content": .string]]
        #expect(
            validator.validate(try json(#"{"question":{"id":1,"content":7}}"#))
                == .jsonValidation(path: "$.question.content", expected: "string", found: "number"))
    }

    @Test func missingKeyIsReported() throws {
        let validator: JSONValidator = ["nick": .string]
        #expect(
            validator.validate(try json("{}")) == .jsonValidation(path: "$.nick", expected: "string", found: "missing"))
    }

    @Test func nullPassesOnlyNullAnyAndOptional() throws {
        let document = try json(#"{"v":null}"#)
        #expect((["v": .null] as JSONValidator).validate(document) == nil)
        #expect((["v": .any] as JSONValidator).validate(document) == nil)
        #expect((["v": .optional(.number)] as JSONValidator).validate(document) == nil)
        #expect(
            (["v": .string] as JSONValidator).validate(document)
                == .jsonValidation(path: "$.v", expected: "string", found: "null"))
        #expect(
            (["v": .object([:])] as JSONValidator).validate(document)
                == .jsonValidation(path: "$.v", expected: "object", found: "null"))
    }

    @Test func booleansAndNumbersAreTold() throws {
        #expect(
            JSONValidator.number.validate(try json("true"))
                == .jsonValidation(path: "$", expected: "number", found: "bool"))
        #expect(
            JSONValidator.bool.validate(try json("1")) == .jsonValidation(path: "$", expected: "bool", found: "number"))
        #expect(
            JSONValidator.bool.validate(try json("0")) == .jsonValidation(path: "$", expected: "bool", found: "number"))
        #expect(JSONValidator.bool.validate(true) == nil)
        #expect(JSONValidator.number.validate(2.5) == nil)
    }

    @Test func arrayElementsAreIndexedInThePath() throws {
        let validator: JSONValidator = ["items": [["id": .number]]]
        #expect(
            validator.validate(try json(#"{"items":[{"id":1},{"id":"2"}]}"#))
                == .jsonValidation(path: "$.items[1].id", expected: "number", found: "string"))
    }

    @Test func emptyArrayLiteralAcceptsAnyArray() throws {
        let validator: JSONValidator = ["list": []]
        #expect(validator.validate(try json(#"{"list":[1,"a",null]}"#)) == nil)
        #expect(
            validator.validate(try json(#"{"list":{}}"#))
                == .jsonValidation(path: "$.list", expected: "array", found: "object"))
    }

    @Test func oddKeysAreQuotedInThePath() throws {
        let validator: JSONValidator = ["a b": ["1x": .string]]
        #expect(
            validator.validate(try json(#"{"a b":{"1x":1}}"#))
                == .jsonValidation(path: #"$["a b"]["1x"]"#, expected: "string", found: "number"))
    }

    @Test func optionalWrapsTheExpectationInItsMessage() throws {
        let validator: JSONValidator = ["n": .optional(.number)]
        #expect(
            validator.validate(try json(#"{"n":"x"}"#))
                == .jsonValidation(path: "$.n", expected: "number", found: "string"))
        #expect(
            ErrandError.jsonValidation(path: "$.n", expected: "number", found: "string").description.contains("$.n"))
    }
}
