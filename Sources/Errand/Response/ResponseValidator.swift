import Foundation

/// Decides whether a response that arrived is a success, in a fixed order: the status code must
/// pass `statusCodeValidator` — an HTML 404 is a `.statusCode(404)`, whatever its body — then the
/// body must read as the response serializer type says, then the JSON must match `jsonValidator`.
enum ResponseValidator {
    /// The first rule `response` breaks; `nil` when it is a success. A body that went elsewhere
    /// (`bodyIsHandedOff`) — to a download's file, to a stream's consumer — is never parsed.
    static func validate(_ response: Response, by rules: ResponseRules, url: URL, bodyIsHandedOff: Bool = false)
        -> ErrandError?
    {
        guard rules.acceptsStatus(response.statusCode) else {
            return .statusCode(response.statusCode)
        }
        guard !bodyIsHandedOff else { return nil }
        let json: Any?
        switch readBody(of: response, as: rules.serializer, url: url, needsJSON: rules.jsonValidator != nil) {
        case .failure(let error): return error
        case .success(let parsed): json = parsed
        }
        guard let validator = rules.jsonValidator else { return nil }
        guard let json = json ?? response.jsonObject else {
            let found = response.data.isEmpty ? "empty body" : "non-JSON body"
            return .jsonValidation(path: "$", expected: validator.expectation, found: found)
        }
        return validator.validate(json)
    }

    /// Checks the body is what the serializer type promises; returns the parsed JSON for `.json`
    /// when `needsJSON`, and else parses only when ``JSONSyntax`` cannot tell.
    private static func readBody(of response: Response, as type: ResponseSerializerType, url: URL, needsJSON: Bool)
        -> Result<Any?, ErrandError>
    {
        switch type {
        case .data:
            return .success(nil)
        case .string:
            return response.string == nil
                ? .failure(.serialization("the body of \(url.absoluteString) is not valid text")) : .success(nil)
        case .json:
            // An empty body (204, HEAD) is no JSON object, not an error, as in YTKNetwork.
            guard !response.data.isEmpty else { return .success(nil) }
            if !needsJSON && JSONSyntax.isCertainlyValid(response.data) { return .success(nil) }
            do {
                return .success(try JSONSerialization.jsonObject(with: response.data, options: [.fragmentsAllowed]))
            } catch {
                let start = String(decoding: response.data.prefix(40), as: UTF8.self)
                return .failure(
                    .serialization("the body of \(url.absoluteString) is not JSON (it starts \"\(start)\")"))
            }
        }
    }
}
