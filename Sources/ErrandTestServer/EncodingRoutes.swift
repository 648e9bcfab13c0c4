import Foundation

/// Bodies that arrive encoded or slowly, as httpbin serves them:
/// - `GET /gzip`: `{"gzipped": true, "method": …, "headers": {…}}` with `Content-Encoding: gzip`.
/// - `GET /drip?numbytes=N&duration=S&delay=D&code=C`: after D seconds, N bytes of `*` spread
///   evenly over S seconds (defaults 10, 2, 0, 200), for idle and deadline timeouts.
enum EncodingRoutes {
    static let all: [Route] = [
        Route(["GET"], "/gzip", handler: gzip),
        Route(["GET"], "/drip", handler: drip),
    ]

    private static func gzip(_ context: RouteContext) -> HTTPResponse {
        var headers: [String: String] = [:]
        for header in context.request.headers { headers[header.name] = header.value }
        let object: [String: Any] = ["gzipped": true, "method": context.request.method, "headers": headers]
        guard let json = HTTPResponse.jsonBody(object) else { return .serverError }
        return HTTPResponse(
            status: 200,
            headers: [HTTPHeader("Content-Type", "application/json"), HTTPHeader("Content-Encoding", "gzip")],
            body: GzipEncoder.encode(json))
    }

    private static func drip(_ context: RouteContext) -> HTTPResponse {
        let query = context.request.queryItems
        func number(_ name: String, _ fallback: Double) -> Double {
            query.last { $0.name == name }.flatMap { Double($0.value) }.map { max($0, 0) } ?? fallback
        }
        let count = Int(min(number("numbytes", 10), 10_000_000))
        let duration = min(number("duration", 2), 60)
        let status = Int(number("code", 200))
        context.sleep(seconds: min(number("delay", 0), 10))
        let pause = count > 0 ? duration / Double(count) : 0
        let server = context.server
        return HTTPResponse(
            status: status, headers: [HTTPHeader("Content-Type", "application/octet-stream")], length: count
        ) { write in
            for _ in 0..<count {
                server.sleep(seconds: pause)
                guard !server.isStopped, write(Data("*".utf8)) else { return }
            }
        }
    }
}
