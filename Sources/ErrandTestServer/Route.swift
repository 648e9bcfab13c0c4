/// One entry of the route table: which methods, which path, and the handler that answers.
///
/// Patterns are literal segments plus `{name}` (one segment) and a final `{name...}` (the
/// non-empty rest of the path, slashes included), e.g. `/basic-auth/{user}/{passwd}`, or a final
/// `{name*}` (the rest, which may be empty: `/a/{rest*}` takes `/a`, `/a/` and `/a/b/c`).
struct Route: Sendable {
    enum Methods: Sendable, ExpressibleByArrayLiteral {
        case any
        case only(Set<String>)

        init(arrayLiteral methods: String...) {
            self = .only(Set(methods))
        }

        /// HEAD is implied wherever GET is allowed, as in Flask.
        func allows(_ method: String) -> Bool {
            switch self {
            case .any: true
            case .only(let methods): methods.contains(method) || (method == "HEAD" && methods.contains("GET"))
            }
        }

        /// What an `Allow` header lists for this route, OPTIONS included.
        var advertised: Set<String> {
            switch self {
            case .any:
                ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "TRACE", "OPTIONS"]
            case .only(let methods):
                methods.union(methods.contains("GET") ? ["HEAD", "OPTIONS"] : ["OPTIONS"])
            }
        }
    }

    private enum Segment: Sendable {
        case literal(String)
        case parameter(String)
        case remainder(String, mayBeEmpty: Bool)
    }

    let methods: Methods
    /// The handler reads the body itself through `RouteContext.body` instead of getting it whole.
    let streamsBody: Bool
    let handler: @Sendable (RouteContext) -> HTTPResponse
    private let segments: [Segment]

    init(
        _ methods: Methods, _ pattern: String, streamsBody: Bool = false,
        handler: @escaping @Sendable (RouteContext) -> HTTPResponse
    ) {
        self.methods = methods
        self.streamsBody = streamsBody
        self.handler = handler
        segments = pattern.split(separator: "/").map { part in
            guard part.hasPrefix("{"), part.hasSuffix("}") else { return .literal(String(part)) }
            let name = part.dropFirst().dropLast()
            if name.hasSuffix("...") { return .remainder(String(name.dropLast(3)), mayBeEmpty: false) }
            if name.hasSuffix("*") { return .remainder(String(name.dropLast()), mayBeEmpty: true) }
            return .parameter(String(name))
        }
    }

    /// The path parameters when `components` (the decoded path split on `/`) fit the pattern.
    func match(_ components: [Substring]) -> [String: String]? {
        var parameters: [String: String] = [:]
        for (position, segment) in segments.enumerated() {
            switch segment {
            case .literal(let literal):
                guard position < components.count, components[position] == literal else { return nil }
            case .parameter(let name):
                guard position < components.count, !components[position].isEmpty else { return nil }
                parameters[name] = String(components[position])
            case .remainder(let name, let mayBeEmpty):
                let rest = components.dropFirst(position).joined(separator: "/")
                guard mayBeEmpty || !rest.isEmpty else { return nil }
                parameters[name] = rest
                return parameters
            }
        }
        return components.count == segments.count ? parameters : nil
    }
}
