import Foundation

/// The certificate authorities a transport trusts to sign servers' certificates; see
/// ``ConnectionOptions/trustedRoots``.
///
/// The files are PEM: one or more `-----BEGIN CERTIFICATE-----` blocks each, as `openssl` and
/// most certificate tools write them. Server certificates are always checked, against these roots
/// and for the host name; no setting turns that off.
public enum TrustedRoots: Sendable, Equatable {
    /// The system's trust store. The default.
    case system
    /// The system's trust store and the authorities in these files: a company's private CA, or a
    /// test server's.
    case adding([URL])
    /// Only the authorities in these files, not the system's: a client that must reach nothing
    /// but its own servers.
    case only([URL])
}
