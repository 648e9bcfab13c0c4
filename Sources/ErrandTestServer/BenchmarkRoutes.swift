import Foundation

/// `GET /small-json`: the same small JSON document every time, prepared once, so that a
/// throughput benchmark measures the client rather than the server's JSON encoding.
enum BenchmarkRoutes {
    static let all: [Route] = [
        Route(["GET"], "/small-json") { _ in response }
    ]

    private static let response = HTTPResponse(
        status: 200, headers: [HTTPHeader("Content-Type", "application/json")],
        body: Data(#"{"id": 42, "name": "errand", "tags": ["fast", "small"], "ok": true}"#.utf8) + Data([0x0A]))
}
