/// How `arguments` are encoded into a request body.
public enum RequestSerializerType: Sendable {
    /// `application/x-www-form-urlencoded`, keys sorted. The default.
    case http
    /// `application/json`, keys sorted.
    case json
}
