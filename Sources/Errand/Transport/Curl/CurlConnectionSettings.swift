import CErrandCurl
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A transport's ``ConnectionOptions`` as libcurl takes them, checked and their files read once,
/// when the transport is made: a missing or malformed file fails every request with the same
/// clear error instead of each handshake with a vaguer one.
struct CurlConnectionSettings: Sendable {
    let httpVersion: HTTPVersionPreference
    /// Whether libcurl can send a second request over an h2c connection: before 8.0 it cannot
    /// (curl issue 10634, "Error in the HTTP2 framing layer"), so each such request gets its own.
    let reusesCleartextHTTP2: Bool
    /// `CURLOPT_PROXY`: `nil` leaves libcurl to read the environment, `""` turns proxies off.
    let proxy: String?
    /// The trusted roots as one PEM blob, for `CURLOPT_CAINFO_BLOB`; `nil` for the system's.
    let certificateBundle: Data?
    /// Whether the system's certificate directory is trusted too (`CURLOPT_CAPATH`).
    let trustsSystemDirectory: Bool
    let clientIdentity: ClientIdentity?
    /// `CURLOPT_RESOLVE` entries: `host:port:address`.
    let resolveEntries: [String]
    let maximumConnectionsPerHost: Int
    /// `CURLOPT_MAXAGE_CONN`: whole seconds an idle pooled connection may still be reused.
    let idleConnectionTimeout: Int
    /// Why no request can be sent with these options; `nil` when they are sound.
    let failure: ErrandError?

    /// Libcurl 8.0.0 as `LIBCURL_VERSION_NUM` spells it.
    private static let firstVersionReusingCleartextHTTP2: UInt32 = 0x08_00_00

    /// Settings for `connection`, with `sessionLimit` connections per host unless it says otherwise.
    init(connection: ConnectionOptions, sessionLimit: Int, libraryVersion: UInt32) {
        httpVersion = connection.httpVersion
        reusesCleartextHTTP2 = libraryVersion >= Self.firstVersionReusingCleartextHTTP2
        // Bounded: the pool's limits are sums and products of it (``CurlPoolLimits``).
        maximumConnectionsPerHost = min(
            connection.connectionsPerHost(sessionLimit: sessionLimit), CurlPoolLimits.largestConnectionsPerHost)
        idleConnectionTimeout = connection.idleConnectionSeconds
        clientIdentity = connection.clientIdentity
        var bundle: Data?
        var trustsSystemDirectory = true
        var proxy: String?
        var resolveEntries: [String] = []
        do throws(ErrandError) {
            proxy = try Self.proxy(connection.proxy)
            resolveEntries = try Self.resolveEntries(connection.hostOverrides)
            switch connection.trustedRoots {
            case .system: break
            case .adding(let files) where files.isEmpty: break
            case .adding(let files):
                bundle = try Self.systemBundle() + Self.certificates(in: files)
            case .only(let files):
                bundle = try Self.certificates(in: files)
                trustsSystemDirectory = false
            }
            if let identity = connection.clientIdentity { try Self.check(identity) }
            failure = nil
        } catch {
            failure = error
        }
        self.proxy = proxy
        self.resolveEntries = resolveEntries
        certificateBundle = bundle
        self.trustsSystemDirectory = trustsSystemDirectory
    }

    // MARK: Proxies

    private static func proxy(_ proxy: ProxyConfiguration) throws(ErrandError) -> String? {
        switch proxy {
        case .environment: return nil
        case .none: return ""
        case .http(let url):
            return try proxyURL(url, schemes: ["http", "https"], as: nil)
        case .socks5(let url):
            // "socks5h": the proxy resolves host names, so they never reach the local resolver.
            return try proxyURL(url, schemes: ["socks5", "socks5h"], as: "socks5h")
        }
    }

    /// Whether a connection to `url` (`http`, `https` or `http+unix`, as libcurl is given it)
    /// carries no TLS, to the server or to a proxy, so that its socket can be read and written
    /// directly. The environment's proxy is judged as libcurl picks it for `http`; a host that
    /// `no_proxy` exempts from a TLS proxy only keeps libcurl's way.
    func isCleartext(toReach url: URL) -> Bool {
        if UnixSocketURL(url) != nil { return true }
        guard url.scheme?.lowercased() == "http" else { return false }
        let proxy = proxy ?? ["http_proxy", "all_proxy", "ALL_PROXY"].lazy.compactMap(Self.environmentValue).first
        return !(proxy ?? "").lowercased().hasPrefix("https:")
    }

    /// A variable of the environment, as it is now; `nil` when unset or empty, as libcurl takes it.
    private static func environmentValue(_ name: String) -> String? {
        guard let value = getenv(name), value.pointee != 0 else { return nil }
        return String(cString: value)
    }

    private static func proxyURL(_ url: URL, schemes: Set<String>, as scheme: String?) throws(ErrandError) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let given = components.scheme?.lowercased(), schemes.contains(given),
            !(components.host ?? "").isEmpty
        else {
            let expected = schemes.sorted().map { "\($0)://host:port" }.joined(separator: " or ")
            throw invalid(
                "ConnectionOptions.proxy: \(Redactor.url(url)) is not a proxy URL (\(expected))", code: .badURL)
        }
        components.scheme = scheme ?? given
        return components.string ?? url.absoluteString
    }

    // MARK: Host overrides

    private static func resolveEntries(_ overrides: [String: String]) throws(ErrandError) -> [String] {
        try overrides.sorted { $0.key < $1.key }.map { (hostAndPort, address) throws(ErrandError) in
            guard let colon = hostAndPort.lastIndex(of: ":"), colon > hostAndPort.startIndex,
                let port = Int(hostAndPort[hostAndPort.index(after: colon)...]), (1...65535).contains(port),
                !address.isEmpty, !(hostAndPort + address).contains(where: { $0 == "," || $0.isWhitespace })
            else {
                throw invalid(
                    "ConnectionOptions.hostOverrides: \"\(hostAndPort)\": \"\(address)\" is not \"host:port\": \"address\"",
                    code: .badURL)
            }
            // An IPv6 address in brackets, as libcurl takes it.
            let bracketed = address.contains(":") && !address.hasPrefix("[") ? "[\(address)]" : address
            return "\(hostAndPort):\(bracketed)"
        }
    }

    // MARK: Certificates

    /// The system's CA bundle, where libcurl says it is or where distributions put it; empty
    /// when there is none, for libcurl still reads the system's certificate directory.
    private static func systemBundle() -> Data {
        var candidates: [String] = []
        if CurlLibrary.isLoaded, let easy = errand_curl_easy_init() {
            var path: UnsafePointer<CChar>?
            if errand_curl_easy_getinfo_string(easy, ERRAND_CURLINFO_CAINFO, &path) == ERRAND_CURLE_OK, let path {
                candidates.append(String(cString: path))
            }
            errand_curl_easy_cleanup(easy)
        }
        candidates += [
            "/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt",
            "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", "/etc/ssl/ca-bundle.pem", "/etc/ssl/cert.pem",
        ]
        for path in candidates {
            if let data = FileManager.default.contents(atPath: path) { return data + Data("\n".utf8) }
        }
        return Data()
    }

    /// The certificates in `files`, one after another.
    private static func certificates(in files: [URL]) throws(ErrandError) -> Data {
        guard !files.isEmpty else { throw invalid("ConnectionOptions.trustedRoots: .only([]) would trust no server") }
        var bundle = Data()
        for file in files {
            let data = try read(file, option: "trustedRoots")
            guard data.contains(marker: "-----BEGIN CERTIFICATE-----") else {
                throw invalid("ConnectionOptions.trustedRoots: \(file.path) holds no PEM certificate")
            }
            bundle += data + Data("\n".utf8)
        }
        return bundle
    }

    private static func check(_ identity: ClientIdentity) throws(ErrandError) {
        let certificate = try read(identity.certificate, option: "clientIdentity")
        guard certificate.contains(marker: "-----BEGIN CERTIFICATE-----") else {
            throw invalid("ConnectionOptions.clientIdentity: \(identity.certificate.path) holds no PEM certificate")
        }
        let key = try read(identity.privateKey, option: "clientIdentity")
        guard key.contains(marker: "PRIVATE KEY-----") else {
            throw invalid("ConnectionOptions.clientIdentity: \(identity.privateKey.path) holds no PEM private key")
        }
        // Without a password OpenSSL would ask for one on the terminal.
        if identity.password == nil && key.contains(marker: "ENCRYPTED") {
            throw invalid(
                "ConnectionOptions.clientIdentity: \(identity.privateKey.path) is encrypted and no password was given")
        }
    }

    private static func read(_ file: URL, option: String) throws(ErrandError) -> Data {
        do {
            return try Data(contentsOf: file)
        } catch {
            let reason = (error as NSError).localizedFailureReason ?? error.localizedDescription
            throw .fileSystem("ConnectionOptions.\(option): cannot read \(file.path): \(reason)")
        }
    }

    private static func invalid(_ reason: String, code: URLError.Code = .secureConnectionFailed) -> ErrandError {
        .transport(URLError(code, userInfo: [NSLocalizedDescriptionKey: reason]))
    }
}

extension Data {
    /// Whether the ASCII text `marker` occurs in these bytes.
    fileprivate func contains(marker: String) -> Bool {
        range(of: Data(marker.utf8)) != nil
    }
}
