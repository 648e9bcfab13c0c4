import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Which TLS servers a transport trusts: the system's trust store, and optionally, per host, only
/// servers whose public key is one of a few pinned ones.
///
/// Pinning by public key, as OkHttp's `CertificatePinner` and curl's `--pinnedpubkey` do, survives
/// certificate renewals that keep the key. A pin is the base64 SHA-256 hash of the server's
/// DER-encoded SubjectPublicKeyInfo, which this prints for a certificate in `cert.pem`:
///
///     openssl x509 -in cert.pem -pubkey -noout | openssl pkey -pubin -outform der \
///         | openssl dgst -sha256 -binary | base64
///
/// Give a backup key's pin as well, so a key change does not lock the app out:
///
///     let trust = try ServerTrust(pinnedPublicKeys: ["api.example.com": [currentKeyPin, backupKeyPin]])
///     let agent = NetworkAgent(config: config, transport: CurlTransport(serverTrust: trust))
///
/// The system's validation always runs too; no setting turns it off. ``CurlTransport`` checks the
/// pins on every connection to a pinned host, redirects included. ``URLSessionTransport`` cannot
/// (FoundationNetworking offers no server-trust hook), so it refuses every request to a pinned
/// host instead of sending it unchecked. Either transport refuses plain `http` to a pinned host,
/// which no key could protect.
public struct ServerTrust: Sendable, Equatable {
    /// Hosts, lowercased, and the canonical base64 pins each accepts.
    private let pins: [String: [String]]

    /// The system's trust store, no pins: the default.
    public static let system = ServerTrust(canonicalPins: [:])

    /// Trusts the system's store, and requires each host in `pinnedPublicKeys` to present one of
    /// its pinned keys. Hosts match exactly, ignoring case; other hosts are not pinned.
    /// - Parameter pinnedPublicKeys: For each host, base64 SHA-256 hashes of public keys it may
    ///   present, each optionally prefixed `sha256/` or `sha256//`.
    /// - Throws: ``ErrandError/serialization(_:)`` when a pin is not the base64 of a 32-byte hash,
    ///   or a host has no pins.
    public init(pinnedPublicKeys: [String: [String]]) throws(ErrandError) {
        var canonical: [String: [String]] = [:]
        for (host, hostPins) in pinnedPublicKeys {
            guard !hostPins.isEmpty else { throw .serialization("ServerTrust: \(host) has no pinned public keys") }
            canonical[host.lowercased(), default: []] += try hostPins.map { pin throws(ErrandError) in
                try Self.canonical(pin, host: host)
            }
        }
        self.init(canonicalPins: canonical)
    }

    private init(canonicalPins: [String: [String]]) {
        pins = canonicalPins
    }

    /// The hosts that are pinned, lowercased.
    public var pinnedHosts: Set<String> { Set(pins.keys) }

    /// The pins for `url`'s host; `nil` when it is not pinned.
    func pins(for url: URL) -> [String]? {
        guard !pins.isEmpty, let host = url.host?.lowercased() else { return nil }
        return pins[host]
    }

    /// Why `url` may not be sent at all, when it goes to a pinned host: over plain HTTP, or through
    /// a transport that cannot check keys (`canCheckPins` false); `nil` to send it.
    func refusal(of url: URL, canCheckPins: Bool) -> ErrandError? {
        guard pins(for: url) != nil else { return nil }
        let reason: String
        if url.scheme?.lowercased() != "https" {
            reason = "\(url.host ?? "") has pinned public keys, which plain HTTP cannot prove"
        } else if !canCheckPins {
            reason =
                "\(url.host ?? "") has pinned public keys, which URLSessionTransport cannot check; use CurlTransport"
        } else {
            return nil
        }
        let userInfo: [String: Any] = [NSURLErrorFailingURLErrorKey: url, NSLocalizedDescriptionKey: reason]
        return .transport(URLError(.secureConnectionFailed, userInfo: userInfo))
    }

    private static func canonical(_ pin: String, host: String) throws(ErrandError) -> String {
        var text = pin.trimmed
        for prefix in ["sha256//", "sha256/"] where text.hasPrefix(prefix) {
            text.removeFirst(prefix.count)
            break
        }
        guard let hash = Data(base64Encoded: text), hash.count == 32 else {
            throw .serialization("ServerTrust: the pin \"\(pin)\" for \(host) is not the base64 of a SHA-256 hash")
        }
        return hash.base64EncodedString()
    }
}
