/// What makes one request's response a success, taken from its definition when it starts.
struct ResponseRules: Sendable {
    /// How the body must read.
    let serializer: ResponseSerializerType
    /// The request's `statusCodeValidator`.
    let acceptsStatus: @Sendable (Int) -> Bool
    let jsonValidator: JSONValidator?

    init(request: any BaseRequest) {
        serializer = request.responseSerializerType
        acceptsStatus = { request.statusCodeValidator($0) }
        jsonValidator = request.jsonValidator
    }
}
