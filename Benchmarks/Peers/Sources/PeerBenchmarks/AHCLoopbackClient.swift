import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// AsyncHTTPClient's async API as its README shows it — `execute`, then the body collected —
/// in two set-ups: `HTTPClient.shared` (NIO's shared event loops, one per core, and 8
/// connections per host, its defaults), and a client of its own on one event loop with 6
/// connections per host, which is what Errand's one curl thread and 6 connections are.
/// The body is collected, not parsed: as URLSession's and libcurl's rows, unlike Errand's.
struct AHCLoopbackClient: LoopbackClient {
    let name: String
    let key: String
    private let client: HTTPClient
    /// The event loop group this client made, shut down with it; `nil` for the shared client.
    private let ownGroup: MultiThreadedEventLoopGroup?
    /// Whether this made its client, which it then shuts down.
    private let ownsClient: Bool

    /// `HTTPClient.shared`, as it comes.
    static func shared() -> AHCLoopbackClient {
        AHCLoopbackClient(name: "AsyncHTTPClient, shared", key: "ahc-shared", client: .shared, ownGroup: nil)
    }

    /// One event loop, 6 connections per host.
    static func oneLoop() -> AHCLoopbackClient {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 6)
        return AHCLoopbackClient(
            name: "AsyncHTTPClient, 1 loop, 6 connections", key: "ahc-1-loop",
            client: HTTPClient(eventLoopGroup: group, configuration: configuration), ownGroup: group)
    }

    /// Over TLS to a server whose certificate the CA in the PEM file `trustedRoots` signed, HTTP/2
    /// by ALPN (the default): on NIO's shared event loops as `HTTPClient.shared` is, or on one.
    static func tls(trustedRoots: URL, oneLoop: Bool) -> AHCLoopbackClient {
        var configuration = HTTPClient.Configuration()
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .file(trustedRoots.path)
        configuration.tlsConfiguration = tls
        guard oneLoop else {
            return AHCLoopbackClient(
                name: "AsyncHTTPClient, shared event loops", key: "ahc-shared",
                client: HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration),
                ownGroup: nil, ownsClient: true)
        }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        return AHCLoopbackClient(
            name: "AsyncHTTPClient, 1 loop", key: "ahc-1-loop",
            client: HTTPClient(eventLoopGroup: group, configuration: configuration), ownGroup: group)
    }

    private init(
        name: String, key: String, client: HTTPClient, ownGroup: MultiThreadedEventLoopGroup?, ownsClient: Bool = false
    ) {
        self.name = name
        self.key = key
        self.client = client
        self.ownGroup = ownGroup
        self.ownsClient = ownsClient || ownGroup != nil
    }

    func measure(url: URL, total: Int, inFlight: Int) async throws -> LoopbackResult {
        try await LoopbackResult.measure(total: total) { count in
            try await run(url: url, total: count, inFlight: inFlight)
        }
    }

    private func run(url: URL, total: Int, inFlight: Int) async throws -> [Duration] {
        let request = HTTPClientRequest(url: url.absoluteString)
        return try await Load.async(total: total, inFlight: inFlight) { [client] in
            let response = try await client.execute(request, timeout: .seconds(10))
            guard response.status == .ok else { throw PeerError("AsyncHTTPClient: GET answered \(response.status)") }
            _ = try await response.body.collect(upTo: 1 << 20)
        }
    }

    func shutdown() async throws {
        if ownsClient { try await client.shutdown() }
        try await ownGroup?.shutdownGracefully()
    }
}
