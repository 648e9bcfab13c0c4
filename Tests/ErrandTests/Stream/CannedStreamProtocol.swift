import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Answers every request to ``host`` with a short event stream from inside URLSession, as an
/// app's own protocol class — a stub in its tests — would.
final class CannedStreamProtocol: URLProtocol {
    static let host = "canned.invalid"
    static let body = Data("data: canned\n\n".utf8)

    override class func canInit(with request: URLRequest) -> Bool {
        request.url?.host == host
    }

    override class func canonicalRequest(for request: URLRequest) -> URLRequest {
        request
    }

    override func startLoading() {
        guard let url = request.url,
            let response = HTTPURLResponse(
                url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Content-Type": "text/event-stream"])
        else { return }
        client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
        client?.urlProtocol(self, didLoad: Self.body)
        client?.urlProtocolDidFinishLoading(self)
    }

    override func stopLoading() {}
}
