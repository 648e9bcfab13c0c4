import Foundation
import Testing

@testable import Errand

/// The JSON check that skips building objects must never pass a body `JSONSerialization` would
/// refuse, and must pass the usual API responses, or it saves nothing.
@Suite struct JSONSyntaxTests {
    static let plainDocuments = [
        #"{"id":1,"name":"Ada","tags":["a","b"],"ok":true,"none":null}"#,
        #"[1, -2, 3.25, 0, -0.5, {"a": [[], {}]}]"#,
        #" {"nested": {"deeper": {"deepest": [true, false, null]}}} "#,
        #""a string with \"escapes\" \\ \/ \b\f\n\r\t""#,
        "42", "-0.125", "true", "null", #""""#, "{}", "[]", "\n\t[ ]\r\n",
    ]

    /// Outside the subset: decided by `JSONSerialization`, valid or not.
    static let undecidedDocuments = [
        #"{"name": "Zoë"}"#, #"{"escaped": "\u00e9"}"#, "1e3", "12345678901234567", "\u{FEFF}{}",
        String(repeating: "[", count: 65) + String(repeating: "]", count: 65),
        "01", "1.", "-", "[1,]", #"{"a" 1}"#, "{'a': 1}", "tru", "nul", "[1] x", "", " ", "\"tab\u{9}inside\"",
    ]

    static func foundationAccepts(_ text: String) -> Bool {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])) != nil
    }

    @Test(arguments: plainDocuments)
    func aPlainDocumentIsValidWithoutParsing(_ text: String) {
        #expect(JSONSyntax.isCertainlyValid(Data(text.utf8)))
        #expect(Self.foundationAccepts(text))
    }

    @Test(arguments: undecidedDocuments)
    func anythingElseIsLeftToFoundation(_ text: String) {
        #expect(!JSONSyntax.isCertainlyValid(Data(text.utf8)))
    }

    /// Thousands of near-misses, each one edit away from a valid document: whatever the check
    /// passes, Foundation accepts.
    @Test func nothingFoundationRefusesIsPassed() {
        var random = SplitMix(seed: 0x5EED)
        let alphabet = Array(#"{}[]:,"\ -.0123456789eEtrufalsn"#.utf8) + [0x00, 0x09, 0x0A, 0x1F, 0x7F, 0xC3, 0xFF]
        var passed = 0
        for document in Self.plainDocuments {
            for _ in 0..<1500 {
                var bytes = Array(document.utf8)
                let position = Int(random.next() % UInt64(bytes.count + 1))
                let byte = alphabet[Int(random.next() % UInt64(alphabet.count))]
                switch random.next() % 3 {
                case 0 where position < bytes.count: bytes.remove(at: position)
                case 1 where position < bytes.count: bytes[position] = byte
                default: bytes.insert(byte, at: position)
                }
                let data = Data(bytes)
                guard JSONSyntax.isCertainlyValid(data) else { continue }
                passed += 1
                let accepted = (try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])) != nil
                #expect(accepted, "passed without parsing, refused by Foundation: \(String(decoding: bytes, as: UTF8.self))")
            }
        }
        // Many edits keep a document valid (a digit for a digit, a space anywhere): the check must pass those.
        #expect(passed > 1000)
    }

    @Test func aResponseThatIsNotJSONStillFailsAsBefore() {
        let rules = ResponseRules(request: Plain())
        let url = URL(string: "http://127.0.0.1/plain")!
        for body in ["<html>", "{\"a\": 1", "{\"name\": \"Zo\u{EB}\""] {
            let error = ResponseValidator.validate(Response(statusCode: 200, data: Data(body.utf8)), by: rules, url: url)
            guard case .serialization(let message)? = error else {
                Issue.record("\(body) gave \(String(describing: error))")
                continue
            }
            #expect(message.contains("is not JSON"))
        }
        for body in [#"{"name": "Zoë"}"#, #"{"id": 7}"#, "1e3"] {
            #expect(ResponseValidator.validate(Response(statusCode: 200, data: Data(body.utf8)), by: rules, url: url) == nil)
        }
    }

    struct Plain: BaseRequest {
        var url: String { "/plain" }
    }

    /// A small deterministic generator, so that a failure repeats.
    struct SplitMix {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }
}
