import Foundation
import Testing

@testable import Errand

/// A transport whose flow control the stream tests check.
enum FlowControlTransport: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case curl
    /// On Linux, its streams go through a libcurl transport of its own.
    case urlSession

    var testDescription: String { rawValue }

    func make(_ fixture: StreamFixture) -> any Transport {
        switch self {
        case .curl: CurlTransport()
        case .urlSession: URLSessionTransport(configuration: fixture.config.sessionConfiguration)
        }
    }
}
