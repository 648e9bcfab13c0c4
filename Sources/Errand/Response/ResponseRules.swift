/// What makes one request's response a success, taken from its definition when it starts.
struct ResponseRules: Sendable {
    /// How the body must read.
    let serializer: ResponseSerializerType
    let jsonValidator: JSONValidator?
    /// Whose `statusCodeValidator` judges the status: kept rather than wrapped in a closure,
    /// which would cost an allocation per request.
    private let request: any BaseRequest

    init(request: any BaseRequest) {
        serializer = request.responseSerializerType
        jsonValidator = request.jsonValidator
        self.request = request
    }

    /// The request's `statusCodeValidator`.
    func acceptsStatus(_ statusCode: Int) -> Bool {
        request.statusCodeValidator(statusCode)
    }
}
