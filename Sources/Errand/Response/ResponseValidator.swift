import Foundation

/// Decides whether a response that arrived is a success, in a fixed order: the body must be
/// readable as the request's response serializer type says, then the status code must pass
/// `statusCodeValidator`, then the JSON must match `jsonValidator`.
enum ResponseValidator {
    static func validate(_ response: Response, for request: any BaseRequest, url: URL) -> ErrandError? {
        let json: Any?
        switch readBody(of: response, as: request.responseSerializerType, url: url) {
        case .failure(let error): return error
        case .success(let parsed): json = parsed
        }
        if !request.statusCodeValidator(response.statusCode) {
            return .statusCode(response.statusCode)
        }
        guard let validator = request.jsonValidator else { return nil }
        guard let json = json ?? response.jsonObject else {
            let found = response.data.isEmpty ? "empty body" : "non-JSON body"
            return .jsonValidation(path: "$", expected: validator.expectation, found: found)
        }
        return validator.validate(json)
    }

    /// Checks the body is what the serializer type promises; returns the parsed JSON for `.json`.
    private static func readBody(of response: Response, as type: ResponseSerializerType, url: URL)
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
