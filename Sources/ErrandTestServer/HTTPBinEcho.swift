import Foundation

/// httpbin's `get_dict`: the parts of a request that its endpoints echo back as JSON.
struct HTTPBinEcho {
    enum Field: String {
        case url, args, form, data, origin, headers, files, json, method
    }

    /// What werkzeug makes of the body as a form, which it does for every endpoint that echoes.
    private enum FormBody {
        /// Not a form (or multipart without a usable boundary): the body stays in `data`.
        case none
        /// Read as a form, so `data` is empty; a multipart body werkzeug cannot parse gives no items.
        case parsed(fields: [(name: String?, value: String)], files: [(name: String?, value: String)])
        /// Beyond Flask's form limits: httpbin answers 413.
        case tooLarge
    }

    /// Headers httpbin hides (they describe its hosting, not the client) unless `?show_env` is given.
    private static let environmentHeaders: Set<String> = [
        "x-varnish", "x-request-start", "x-heroku-queue-depth", "x-real-ip", "x-forwarded-proto",
        "x-forwarded-protocol", "x-forwarded-ssl", "x-heroku-queue-wait-time", "x-forwarded-for",
        "x-heroku-dynos-in-use", "x-forwarded-port", "x-request-id", "via", "total-route-time",
        "connect-time",
    ]

    let request: HTTPRequest
    private let formBody: FormBody

    init(request: HTTPRequest) {
        self.request = request
        formBody = Self.formBody(of: request)
    }

    /// The JSON httpbin answers with; 413 for a form over Flask's limits, and 500 where httpbin
    /// fails to sort keys because a multipart part had no name (`None`) beside named ones.
    func response(_ fields: [Field]) -> HTTPResponse {
        switch formBody {
        case .tooLarge:
            return .formTooLarge
        case .parsed(let form, let files):
            let mixesNone: ([(name: String?, value: String)]) -> Bool = { items in
                items.contains { $0.name == nil } && items.contains { $0.name != nil }
            }
            if (fields.contains(.form) && mixesNone(form)) || (fields.contains(.files) && mixesNone(files)) {
                return .serverError
            }
        case .none:
            break
        }
        return .json(dictionary(fields))
    }

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
        case .form: Self.semiflatten(formItems.fields.map { ($0.name ?? "null", $0.value) })
        case .data: bodyConsumed ? "" : Self.jsonSafe(request.body)
        case .origin: request.headers.first("X-Forwarded-For") ?? request.peerAddress
        case .headers: headers
        case .files: filesDictionary
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

    private var bodyConsumed: Bool {
        if case .none = formBody { false } else { true }
    }

    private var formItems: (fields: [(name: String?, value: String)], files: [(name: String?, value: String)]) {
        if case .parsed(let fields, let files) = formBody { (fields, files) } else { ([], []) }
    }

    /// `request.files.items()` yields only the first file of each name, so httpbin shows no arrays here.
    private var filesDictionary: [String: Any] {
        var result: [String: Any] = [:]
        for file in formItems.files where result[file.name ?? "null"] == nil {
            result[file.name ?? "null"] = file.value
        }
        return result
    }

    /// werkzeug reads the body as a form for these two media types (then `data` is empty), except
    /// multipart without an ASCII boundary, which it leaves alone.
    private static func formBody(of request: HTTPRequest) -> FormBody {
        let contentType = HeaderOptions(request.headers.first("Content-Type") ?? "")
        switch contentType.value.lowercased() {
        case "application/x-www-form-urlencoded":
            if let length = request.headers.first("Content-Length").flatMap({ Int($0) }),
                length > MultipartFormData.maxFieldSize
            {
                return .tooLarge
            }
            let fields = URLEncoding.parseForm(String(decoding: request.body, as: UTF8.self)[...])
            return .parsed(fields: fields.map { ($0.name, $0.value) }, files: [])
        case "multipart/form-data":
            guard let boundary = contentType.parameters["boundary"], !boundary.isEmpty,
                boundary.unicodeScalars.allSatisfy(\.isASCII)
            else {
                return .none
            }
            do {
                let parts = try MultipartFormData.parse(request.body, boundary: boundary)
                return .parsed(
                    fields: parts.filter { !$0.isFile }.map { ($0.name, $0.text) },
                    files: parts.filter(\.isFile).map {
                        (
                            $0.name,
                            jsonSafe(
                                $0.body,
                                contentType: $0.contentType.flatMap { $0.isEmpty ? nil : $0 }
                                    ?? "application/octet-stream")
                        )
                    })
            } catch .tooLarge {
                return .tooLarge
            } catch {
                return .parsed(fields: [], files: [])
            }
        default:
            return .none
        }
    }

    /// The body parsed as JSON whatever its content type (httpbin tries `json.loads` on every
    /// body), or `null`.
    private var json: Any {
        guard !bodyConsumed, String(data: request.body, encoding: .utf8) != nil,
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
