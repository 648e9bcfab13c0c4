/// Which HTTP version a transport speaks to servers; see ``ConnectionOptions/httpVersion``.
public enum HTTPVersionPreference: Sendable, Equatable {
    /// HTTP/2 over TLS when the server offers it (ALPN), else HTTP/1.1; plain `http` is HTTP/1.1.
    /// The default.
    case automatic
    /// HTTP/1.1 only, also to servers that offer HTTP/2.
    case http1_1
    /// HTTP/2 from the first byte on plain `http` ("h2c with prior knowledge"), for servers known
    /// to speak it, such as gRPC back ends and service meshes; over `https`, HTTP/2 by ALPN.
    case http2PriorKnowledge
}
