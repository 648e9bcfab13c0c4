import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The `User-Agent` requests carry unless they name their own: `<app>/<version> Errand/<version>`,
/// so server logs tell apps and their versions apart (Linux URLSession's own says only
/// `<process> (unknown version) curl/<version>`).
enum UserAgent {
    /// Errand's version, as the `User-Agent` reports it.
    static let errandVersion = "0.1.0"

    /// The app's name: the bundle name on Apple platforms, else the process name.
    static let appName: String = {
        #if canImport(Darwin)
            if let name = Bundle.main.object(forInfoDictionaryKey: "CFBundleName") as? String, !name.isEmpty {
                return name
            }
        #endif
        return ProcessInfo.processInfo.processName
    }()

    /// `<app>/<appVersion> Errand/<version>`; without `/<appVersion>` when `appVersion` is empty.
    static func value(appVersion: String) -> String {
        appVersion.isEmpty ? withoutAppVersion : "\(appToken)/\(token(appVersion)) Errand/\(errandVersion)"
    }

    /// Worked out once: every request of the process carries it.
    private static let appToken = token(appName)
    private static let withoutAppVersion = "\(appToken) Errand/\(errandVersion)"
    private static let separators = Set("()<>@,;:\\\"/[]?={} \t")

    /// Adds the default to `headers` unless they name a `User-Agent` already, or the session
    /// configuration does (`sessionSetsUserAgent`, by default looked up in `config`).
    static func addDefault(to headers: inout [String: String], config: NetworkConfig, sessionSetsUserAgent: Bool?) {
        guard headers.headerField("User-Agent") == nil,
            !(sessionSetsUserAgent ?? isSet(in: config.sessionConfiguration))
        else { return }
        headers["User-Agent"] = value(appVersion: config.appVersion)
    }

    /// Whether `configuration`'s additional headers name a `User-Agent`.
    static func isSet(in configuration: URLSessionConfiguration) -> Bool {
        (configuration.httpAdditionalHeaders ?? [:]).keys.contains { ($0 as? String)?.lowercased() == "user-agent" }
    }

    /// `text` as an HTTP token: spaces and separators, which would split the product, become `-`.
    private static func token(_ text: String) -> String {
        String(text.map { separators.contains($0) || !$0.isASCII || $0.isNewline ? "-" : $0 })
    }
}
