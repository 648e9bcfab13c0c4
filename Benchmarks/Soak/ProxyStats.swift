import Foundation

/// What one listener of the ``FaultProxy`` saw, as the soak's server process reports it.
struct ListenerReport: Sendable, Codable, Equatable {
    /// Who ended a connection first.
    enum Ending: String, Sendable, Codable, CaseIterable {
        /// The client closed or reset it (or stopped reading long after the server had closed).
        case client
        /// The server closed or reset it.
        case server
        /// A fault of the plan: a reset or a half-close.
        case fault
        /// Idle, not upgraded, for the listener's keep-alive limit: the "server" closed it.
        case idle
    }

    /// A WebSocket connection that the client ended: its label and age.
    struct ClientEnd: Sendable, Codable, Equatable {
        let label: String
        let age: Double
    }

    var name = ""
    var accepted = 0
    var upgraded = 0
    var endings: [String: Int] = [:]
    var faults: [String: Int] = [:]
    var bytesToClients = 0
    var bytesToServer = 0
    /// Upgraded connections the client ended, the last 500.
    var clientEnds: [ClientEnd] = []

    func ended(_ ending: Ending) -> Int { endings[ending.rawValue] ?? 0 }
}

/// The listeners' reports, shared between the proxy's thread and whoever asks.
final class ProxyStats: @unchecked Sendable {  // every `var` is read and written only while holding `lock`
    private let lock = NSLock()
    private var reports: [ListenerReport]
    private var stopped = false

    init(names: [String]) {
        reports = names.map { ListenerReport(name: $0) }
    }

    var snapshot: [ListenerReport] {
        lock.withLock { reports }
    }

    var isStopped: Bool {
        lock.withLock { stopped }
    }

    func stop() {
        lock.withLock { stopped = true }
    }

    func update(_ listener: Int, _ change: (inout ListenerReport) -> Void) {
        lock.withLock { change(&reports[listener]) }
    }
}
