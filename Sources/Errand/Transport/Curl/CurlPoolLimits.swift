import Foundation

/// How many connections libcurl may keep, following what is open, so that streams and sockets
/// never take a request's place: libcurl counts every connection it holds — an event stream open
/// for hours, a WebSocket over TLS — against both its per-host limit and its pool, and a pool
/// full of them closed each request's connection as it ended (70,388 connections for 85,837
/// requests, in a soak beside 250 streams and sockets).
///
/// - Per host: ``ConnectionOptions/maximumConnectionsPerHost`` for requests, besides the streams
///   and sockets open (libcurl's limit is one number for every host).
/// - In all: that many idle connections for each host in use (at least ``pooledHosts``), besides
///   every connection in use.
struct CurlPoolLimits {
    /// The hosts whose full pools are kept however few are in use: a burst to a fifth host does
    /// not close the idle connections of four others.
    static let pooledHosts = 4
    /// The most connections per host libcurl is allowed, whatever the options say: far more than
    /// a process has descriptors, and small enough that no limit made of it overflows.
    static let largestConnectionsPerHost = 1 << 20

    let connectionsPerHost: Int
    /// Transfers running, by `scheme://host:port`, and each transfer's key, by request id.
    private var transfersByHost: [String: Int] = [:]
    private var hostOfTransfer: [Int: String] = [:]
    private var streams = 0
    private var libcurlSockets = 0
    /// The limits as last applied.
    private var applied: (perHost: Int, total: Int)?

    init(connectionsPerHost: Int) {
        self.connectionsPerHost = connectionsPerHost
    }

    /// The limit of connections per host, and of connections in all.
    var limits: (perHost: Int, total: Int) {
        let transfers = hostOfTransfer.count
        let idle = connectionsPerHost * max(Self.pooledHosts, transfersByHost.count)
        return (connectionsPerHost + streams + libcurlSockets, idle + transfers + libcurlSockets)
    }

    /// A transfer `id` to `url` starts; `isStreaming` for a stream, which may stay open for hours.
    mutating func transferStarted(_ id: Int, to url: URL, isStreaming: Bool) {
        let key = Self.key(of: url)
        hostOfTransfer[id] = key
        transfersByHost[key, default: 0] += 1
        if isStreaming { streams += 1 }
    }

    /// The transfer `id` ended.
    mutating func transferEnded(_ id: Int, isStreaming: Bool) {
        guard let key = hostOfTransfer.removeValue(forKey: id) else { return }
        let remaining = (transfersByHost[key] ?? 1) - 1
        transfersByHost[key] = remaining > 0 ? remaining : nil
        if isStreaming { streams -= 1 }
    }

    /// libcurl holds one more connection for a WebSocket (`1`), or one fewer (`-1`).
    mutating func socketConnectionsChanged(by change: Int) {
        libcurlSockets += change
    }

    /// The limits, when they changed since last taken.
    mutating func takeChanges() -> (perHost: Int, total: Int)? {
        let now = limits
        if let applied, applied == now { return nil }
        applied = now
        return now
    }

    private static func key(of url: URL) -> String {
        "\(url.scheme ?? "")://\(url.host ?? ""):\(url.port ?? -1)"
    }
}
