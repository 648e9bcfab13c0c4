/// How a response body is interpreted before validation.
public enum ResponseSerializerType: Sendable {
    /// Raw bytes; no parsing.
    case data
    /// Text, decoded with the charset the server names (UTF-8 when it names none).
    case string
    /// JSON. A non-empty body that is not JSON fails with ``ErrandError/serialization(_:)``. The default.
    case json
}
