import Foundation

/// A fully built HTTP request, as plain values: what a ``Transport`` sends.
public struct TransportRequest: Sendable, Equatable {
    /// The absolute URL, query included.
    public var url: URL
    /// The method, such as `"GET"`.
    public var method: String
    /// The header fields to send.
    public var headers: [String: String]
    /// Names of the fields of ``headers`` that carry credentials, matched case-insensitively: a
    /// redirect to another origin drops them, as it always drops `Authorization`, `Cookie` and
    /// `Proxy-Authorization`. The agent marks the fields an ``Authenticator`` applied and those
    /// whose names mark a secret, as the debug log masks them (`X-API-Key`, `X-Auth-Token`,
    /// `Private-Token`, `X-Session-Id`); an interceptor that adds a credential of another name
    /// inserts it here. Default empty.
    public var credentialHeaders: Set<String> = []
    /// The body; `nil` for none.
    public var body: Data?
    /// A file whose bytes are the body, streamed from disk; when set, ``body`` is `nil`.
    public var bodyFileURL: URL?
    /// Where the body starts in ``bodyFileURL``, in bytes: a resumed upload sends the rest of
    /// its file. Default `0`.
    public var bodyFileOffset: Int64 = 0
    /// A body produced while it is sent, read once (``UploadBody/stream(_:length:)``); when set,
    /// ``body`` and ``bodyFileURL`` are `nil`. A transport that cannot send it fails the request
    /// saying so. Default `nil`.
    public var bodyStream: BodyStream?
    /// Seconds to wait for data before failing with ``ErrandError/timedOut``.
    public var timeoutInterval: Double
    /// Seconds the whole exchange may take before failing with ``ErrandError/timedOut``; `nil` for no limit.
    public var timeoutIntervalForResource: Double?
    /// Whether a ``ResponseStream`` reads the response as it arrives, perhaps for hours: its
    /// consumer may ask the transport to pause (``TransportTask/pauseReceiving()``), and a
    /// transport may send it a way that can (``URLSessionTransport`` does on Linux). Default `false`.
    public var isStreaming = false
    /// The jar the transport sends cookies from and stores each hop's `Set-Cookie` fields into,
    /// by that hop's URL; `nil` for none. A `Cookie` field in ``headers`` is sent instead of the
    /// jar's. The agent sets its ``NetworkConfig/cookieJar`` unless ``BaseRequest/usesCookies`` is
    /// `false`; an ``AuthenticationInterceptor`` with an ``AccountStore`` sets the account's. Default `nil`.
    public var cookieJar: CookieJar?
    /// Whether this is a WebSocket's opening handshake: a transport that can opens a connection
    /// of its own for it, and after a `101` reports the peer's bytes as the body.
    var upgradesToWebSocket = false

    /// Creates a request.
    public init(
        url: URL, method: String = "GET", headers: [String: String] = [:], body: Data? = nil,
        bodyFileURL: URL? = nil, bodyStream: BodyStream? = nil, timeoutInterval: Double = 60,
        timeoutIntervalForResource: Double? = nil
    ) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.bodyFileURL = bodyFileURL
        self.bodyStream = bodyStream
        self.timeoutInterval = timeoutInterval
        self.timeoutIntervalForResource = timeoutIntervalForResource
    }

    /// The value of a header field, matched case-insensitively.
    public func value(forHeader name: String) -> String? {
        headers.headerField(name)
    }
}

extension TransportRequest {
    /// The `Cookie` value the transport adds from ``cookieJar`` for ``url``; `nil` when the jar
    /// has none for it, or the request names its own.
    var jarCookieHeader: String? {
        guard let cookieJar, headers.headerField("Cookie") == nil else { return nil }
        return cookieJar.cookieHeader(for: url)
    }

    /// Header fields that carry credentials whoever set them.
    static let standardCredentialHeaders: Set<String> = ["authorization", "cookie", "proxy-authorization"]

    /// Whether the header field `name` carries a credential: a standard one, or one marked in
    /// ``credentialHeaders``.
    func isCredentialHeader(_ name: String) -> Bool {
        Self.standardCredentialHeaders.contains(name.lowercased())
            || credentialHeaders.contains { $0.equalsIgnoringASCIICase(name) }
    }

    /// This request with its fields whose names mark a secret marked as credentials too: a token
    /// in a request's own `headers`, or one an interceptor added, is as much one as what an
    /// ``Authenticator`` applies.
    func markingSecretHeaders() -> TransportRequest {
        let secret = headers.keys.filter { Redactor.isSensitive($0) && !isCredentialHeader($0) }
        guard !secret.isEmpty else { return self }
        var marked = self
        marked.credentialHeaders.formUnion(secret)
        return marked
    }
}
