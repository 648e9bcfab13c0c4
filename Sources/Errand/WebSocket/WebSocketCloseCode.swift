/// The status code of a WebSocket close frame (RFC 6455 §7.4): why a side closed the socket.
///
/// Any `UInt16` makes a code; the statics name those RFC 6455 §7.4.1 defines. Codes 4000–4999
/// are for applications to agree on.
public struct WebSocketCloseCode: RawRepresentable, Sendable, Hashable {
    /// The code as sent on the wire.
    public let rawValue: UInt16

    /// A close code with the given value; any value is accepted.
    public init(rawValue: UInt16) {
        self.rawValue = rawValue
    }

    /// 1000: the purpose of the connection was fulfilled.
    public static let normalClosure = Self(rawValue: 1000)
    /// 1001: the endpoint is going away: a server shutting down, a client cancelling.
    public static let goingAway = Self(rawValue: 1001)
    /// 1002: the peer broke the protocol.
    public static let protocolError = Self(rawValue: 1002)
    /// 1003: a message of a type the endpoint cannot accept (binary to a text-only endpoint).
    public static let unsupportedData = Self(rawValue: 1003)
    /// 1005: the close frame carried no code. Never sent; reported when a peer's close had none.
    public static let noStatusReceived = Self(rawValue: 1005)
    /// 1006: the connection dropped without a close frame. Never sent.
    public static let abnormalClosure = Self(rawValue: 1006)
    /// 1007: a message's data did not match its type, such as invalid UTF-8 in a text message.
    public static let invalidFramePayloadData = Self(rawValue: 1007)
    /// 1008: a message broke the endpoint's policy.
    public static let policyViolation = Self(rawValue: 1008)
    /// 1009: a message too big to process.
    public static let messageTooBig = Self(rawValue: 1009)
    /// 1010: the client needed an extension the server did not agree to.
    public static let mandatoryExtensionMissing = Self(rawValue: 1010)
    /// 1011: the server met a condition that kept it from fulfilling the request.
    public static let internalServerError = Self(rawValue: 1011)

    /// Whether the code may appear in a close frame (RFC 6455 §7.4, with the codes IANA later
    /// registered up to 1014): 1005, 1006 and 1015 only describe a close, and 0–999 and
    /// 1016–2999 are not assigned.
    var isAllowedOnTheWire: Bool {
        switch rawValue {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }
}

extension WebSocketCloseCode: CustomStringConvertible {
    /// The number, with the RFC's name where there is one: `1000 (normal closure)`.
    public var description: String {
        let names: [UInt16: String] = [
            1000: "normal closure", 1001: "going away", 1002: "protocol error", 1003: "unsupported data",
            1005: "no status received", 1006: "abnormal closure", 1007: "invalid frame payload data",
            1008: "policy violation", 1009: "message too big", 1010: "mandatory extension missing",
            1011: "internal server error", 1012: "service restart", 1013: "try again later", 1014: "bad gateway",
        ]
        return names[rawValue].map { "\(rawValue) (\($0))" } ?? "\(rawValue)"
    }
}
