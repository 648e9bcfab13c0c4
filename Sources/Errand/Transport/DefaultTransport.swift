import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Picks the transport of a ``NetworkAgent`` created without one.
///
/// On Linux: ``CurlTransport`` when libcurl can be loaded, else ``URLSessionTransport``; on
/// Apple platforms: ``URLSessionTransport``. The environment variable `ERRAND_TRANSPORT`
/// overrides the choice: `urlsession`, or `curl` (where libcurl can be loaded).
enum DefaultTransport {
    /// The environment variable that overrides the choice.
    static let environmentVariable = "ERRAND_TRANSPORT"

    /// A new transport of the chosen kind, using `configuration` and `connection`.
    static func make(configuration: URLSessionConfiguration, connection: ConnectionOptions = .init()) -> any Transport {
        switch ProcessInfo.processInfo.environment[environmentVariable]?.lowercased() {
        case "urlsession":
            return URLSessionTransport(configuration: configuration, connection: connection)
        case "curl" where CurlTransport.isAvailable:
            return CurlTransport(configuration: configuration, connection: connection)
        default:
            #if canImport(FoundationNetworking)
                if CurlTransport.isAvailable {
                    return CurlTransport(configuration: configuration, connection: connection)
                }
            #endif
            return URLSessionTransport(configuration: configuration, connection: connection)
        }
    }
}
