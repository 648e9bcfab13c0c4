import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking

    /// Which of ``URLSessionTransport``'s requests go through libcurl on Linux instead of
    /// FoundationNetworking, and the ``CurlTransport`` that sends them, made at the first.
    ///
    /// FoundationNetworking's HTTP protocol ends the process on answers any server, or the network
    /// between, can give (swift-corelibs-foundation 6.3.1): a chunked body with trailer fields and
    /// a head cut off by a closed connection ("Transfer completed, but there's no response"), a
    /// `Content-Length` within 512 of 2^63 (an overflow in its header callback), a redirect to a
    /// protocol-relative IPv6 address ("Invalid URL"). It also cannot pause a stream, and sends a
    /// streamed body cut short. So every request it would serve itself goes here, WebSockets too.
    ///
    /// A request stays on the session where one of the configuration's own `protocolClasses` —
    /// not FoundationNetworking's — takes it (a stub, a cache: libcurl would bypass it), and to a
    /// host with pinned keys, which the session refuses as it cannot check them; a redirect to
    /// such a host from one that came here is checked against its pins by libcurl.
    final class SessionLibcurlRoute: Sendable {
        private let transport = Locked<CurlTransport?>(nil)
        private let configuration: URLSessionConfiguration
        private let connection: ConnectionOptions
        private let serverTrust: ServerTrust
        /// Whether requests other than streams, streamed bodies and WebSockets come here too.
        private let takesPlainRequests: Bool

        /// `nil` where libcurl cannot be loaded: every request stays on the session.
        init?(
            configuration: URLSessionConfiguration, connection: ConnectionOptions, serverTrust: ServerTrust,
            takesPlainRequests: Bool
        ) {
            guard CurlTransport.isAvailable else { return nil }
            self.configuration = configuration
            self.connection = connection
            self.serverTrust = serverTrust
            self.takesPlainRequests = takesPlainRequests
        }

        /// The transport made so far, if a request went through it.
        var madeTransport: CurlTransport? { transport[\.self] }

        /// The transport that sends `request`, or `nil` to send it on the session.
        func transport(for request: TransportRequest) -> CurlTransport? {
            let goesAround =
                takesPlainRequests || request.isStreaming || request.bodyStream != nil || request.upgradesToWebSocket
            guard goesAround, serverTrust.refusal(of: request.url, canCheckPins: false) == nil,
                isServedByFoundationNetworking(request)
            else { return nil }
            return transport.withLock { transport in
                if let transport { return transport }
                let made = CurlTransport(configuration: configuration, connection: connection, serverTrust: serverTrust)
                transport = made
                return made
            }
        }

        /// Whether FoundationNetworking's own protocol would serve `request`: the first of the
        /// configuration's `protocolClasses` that takes it is one of FoundationNetworking's, as it
        /// asks them in order. With no classes at all, the session decides.
        private func isServedByFoundationNetworking(_ request: TransportRequest) -> Bool {
            let classes = configuration.protocolClasses ?? []
            guard !classes.allSatisfy({ Self.builtIn.contains(ObjectIdentifier($0)) }) else { return !classes.isEmpty }
            let urlRequest = URLSessionTransport.urlRequest(for: request)
            let taker: AnyClass? = classes.first { ($0 as? URLProtocol.Type)?.canInit(with: urlRequest) == true }
            return taker.map { Self.builtIn.contains(ObjectIdentifier($0)) } ?? false
        }

        private static let builtIn = Set(
            (URLSessionConfiguration.default.protocolClasses ?? []).map(ObjectIdentifier.init))
    }
#endif
