import Foundation

/// The certificate and private key a transport presents to servers that ask for one (mutual
/// TLS); see ``ConnectionOptions/clientIdentity``.
///
/// Both files are PEM. ``description`` masks the password.
public struct ClientIdentity: Sendable, Equatable, CustomStringConvertible {
    /// The client certificate, optionally followed by its intermediate certificates.
    public var certificate: URL
    /// The certificate's private key, PKCS#8 or the older RSA/EC forms, encrypted or not.
    public var privateKey: URL
    /// The password of an encrypted ``privateKey``; `nil` for a key that is not encrypted.
    public var password: String?

    /// Creates an identity from PEM files.
    /// - Parameters:
    ///   - certificate: See ``certificate``.
    ///   - privateKey: See ``privateKey``.
    ///   - password: See ``password``. Default `nil`.
    public init(certificate: URL, privateKey: URL, password: String? = nil) {
        self.certificate = certificate
        self.privateKey = privateKey
        self.password = password
    }

    /// The files, with the password masked.
    public var description: String {
        let password = password == nil ? "nil" : Redactor.placeholder
        return "ClientIdentity(certificate: \(certificate.path), privateKey: \(privateKey.path), password: \(password))"
    }
}
