import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A plain `URLSession` data task with a completion handler, as the root package's
/// `loopback.urlsession` rows send it: the default configuration (6 connections per host), the
/// body handed over as `Data` and not parsed. On Linux this is FoundationNetworking, on libcurl.
struct URLSessionLoopbackClient: LoopbackClient {
    let name = "URLSession"
    let key = "urlsession"
    private let session = URLSession(configuration: .default)

    func measure(url: URL, total: Int, inFlight: Int) async throws -> LoopbackResult {
        try await LoopbackResult.measure(total: total) { count in
            try await run(url: url, total: count, inFlight: inFlight)
        }
    }

    private func run(url: URL, total: Int, inFlight: Int) async throws -> [Duration] {
        try await Load.callbacks(total: total, inFlight: inFlight) { [session] done in
            session.dataTask(with: URLRequest(url: url, timeoutInterval: 10)) { _, response, error in
                let status = (response as? HTTPURLResponse)?.statusCode
                done(
                    error.map { "URLSession GET \(url.path) failed: \($0)" }
                        ?? (status == 200 ? nil : "URLSession GET \(url.path) answered \(status ?? 0)"))
            }.resume()
        }
    }

    func shutdown() async throws {
        session.finishTasksAndInvalidate()
    }
}
