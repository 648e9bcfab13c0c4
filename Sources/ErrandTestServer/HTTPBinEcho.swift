import Foundation

/// httpbin's `get_dict`: the parts of a request that its endpoints echo back as JSON.
struct HTTPBinEcho {
    enum Field: String {
        case url, args, form, data, origin, headers, files, json, method
    }

    /// Headers httpbin hides (they describe its hosting, not the client) unless `?show_env` is given.
    private static let environmentHeaders: Set<String> = [
        "x-varnish", "x-request-start", "x-heroku-queue-depth", "x-real-ip", "x-forwarded-proto",
        "x-forwarded-protocol", "x-forwarded-ssl", "x-heroku-queue-wait-time", "x-forwarded-for",
        "x-heroku-dynos-in-use", "x-forwarded-port", "x-request-id", "via", "total-route-time",
        "connect-time",
    ]

    let request: HTTPRequest

    /// The requested fields, keyed by their httpbin names.
    func dictionary(_ fields: [Field]) -> [String: Any] {
        var result: [String: Any] = [:]
        for field in fields {
            result[field.rawValue] = value(of: field)
        }
        return result
    }

    private func value(of field: Field) -> Any {
        switch field {
        case .url: url
        case .args: Self.semiflatten(request.queryItems)
        case .form: isForm ? Self.semiflatten(URLEncoding.parseForm(bodyText[...])) : [String: Any]()
        case .data: isForm ? "" : Self.jsonSafe(request.body)
        case .origin: request.headers.first("X-Forwarded-For") ?? request.peerAddress
        case .headers: headers
        case .files: [String: Any]()
        case .json: json
        case .method: request.method
        }
    }

    /// `http://<host><path>?<query>` as werkzeug's `request.url` spells it: host lower-cased,
    /// repeated slashes merged, UTF-8 unescaped.
    var url: String {
        let host = (request.headers.first("Host") ?? "127.0.0.1").lowercased()
        var path = URLEncoding.iriPath(request.rawPath)
        while path.contains("//") { path = path.replacingOccurrences(of: "//", with: "/") }
        var url = "http://\(host)\(path)"
        if !request.rawQuery.isEmpty {
            url += "?" + URLEncoding.iriQuery(request.rawQuery)
        }
        return url
    }

    /// The request headers as werkzeug presents them behind gunicorn: names Title-Cased,
    /// repeated headers joined with `,`, names with `_` dropped, hosting headers hidden.
    var headers: [String: String] {
        let showEnvironment = request.queryItems.contains { $0.name == "show_env" }
        var result: [String: String] = [:]
        for header in request.headers where !header.name.contains("_") {
            if !showEnvironment && Self.environmentHeaders.contains(header.name.lowercased()) { continue }
            let name = Self.titleCased(header.name)
            result[name] = result[name].map { "\($0),\(header.value)" } ?? header.value
        }
        return result
    }

    /// werkzeug fills `form` (and leaves `data` empty) only for this media type; multipart is
    /// not parsed here yet.
    private var isForm: Bool {
        request.mediaType == "application/x-www-form-urlencoded"
    }

    private var bodyText: String {
        String(decoding: request.body, as: UTF8.self)
    }

    /// The body parsed as JSON whatever its content type (httpbin tries `json.loads` on every
    /// body), or `null`.
    private var json: Any {
        guard !isForm, String(data: request.body, encoding: .utf8) != nil,
            let object = try? JSONSerialization.jsonObject(with: request.body, options: [.fragmentsAllowed])
        else {
            return NSNull()
        }
        return object
    }

    /// Text when the bytes are UTF-8, else a `data:` URL with the bytes in base64 (httpbin's `json_safe`).
    static func jsonSafe(_ data: Data, contentType: String = "application/octet-stream") -> String {
        if let text = String(data: data, encoding: .utf8) { return text }
        return "data:\(contentType);base64,\(data.base64EncodedString())"
    }

    /// A key given once maps to its value, a repeated key to the array of its values.
    static func semiflatten(_ items: [(name: String, value: String)]) -> [String: Any] {
        var grouped: [String: [String]] = [:]
        for item in items { grouped[item.name, default: []].append(item.value) }
        return grouped.mapValues { $0.count == 1 ? $0[0] as Any : $0 as Any }
    }

    /// Python's `str.title()` on ASCII, which werkzeug applies to every header name:
    /// `x-custom-header` → `X-Custom-Header`, `x-abc1def` → `X-Abc1Def`.
    static func titleCased(_ name: String) -> String {
        var result = ""
        var previousWasLetter = false
        for character in name {
            result += previousWasLetter ? character.lowercased() : character.uppercased()
            previousWasLetter = character.isLetter
        }
        return result
    }
}
