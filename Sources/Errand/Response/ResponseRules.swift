/// What makes one request's response a success, taken from its definition when it starts.
struct ResponseRules: Sendable {
    /// How the body must read.
    let serializer: ResponseSerializerType
    let jsonValidator: JSONValidator?
    /// Whose `statusCodeValidator` judges the status: kept rather than wrapped in a closure,
    /// which would cost an allocation per request.
    private let request: any BaseRequest
    /// Whether the request is a WebSocket's handshake, which only `101 Switching Protocols` answers.
    private let upgradesToWebSocket: Bool

    init(request: any BaseRequest, upgradesToWebSocket: Bool = false) {
        serializer = request.responseSerializerType
        jsonValidator = request.jsonValidator
        self.request = request
        self.upgradesToWebSocket = upgradesToWebSocket
    }

    /// The request's `statusCodeValidator`; for a WebSocket's handshake, whether it is `101`.
    func acceptsStatus(_ statusCode: Int) -> Bool {
        upgradesToWebSocket ? statusCode == 101 : request.statusCodeValidator(statusCode)
    }
}
