import Foundation

/// The httpbin-compatible endpoints. The reference is httpbin 0.10.4 (`core.py`, `helpers.py`):
/// the same test scenarios run against a real httpbin, so shapes and status codes follow it.
enum HTTPBinRoutes {
    static let all: [Route] = [
        Route(["GET"], "/get") { echo($0, [.url, .args, .headers, .origin]) },
        Route(["POST"], "/post") { echo($0, bodyFields) },
        Route(["PUT"], "/put") { echo($0, bodyFields) },
        Route(["PATCH"], "/patch") { echo($0, bodyFields) },
        Route(["DELETE"], "/delete") { echo($0, bodyFields) },
        Route(.any, "/anything") { echo($0, bodyFields + [.method]) },
        Route(.any, "/anything/{anything...}") { echo($0, bodyFields + [.method]) },
        Route(["GET"], "/headers") { echo($0, [.headers]) },
        Route(.any, "/status/{codes}", handler: status),
        Route(["GET", "POST"], "/response-headers", handler: responseHeaders),
        Route(["GET"], "/basic-auth/{user}/{passwd}", handler: basicAuth),
        Route(.any, "/delay/{delay}", handler: delay),
        Route(["GET"], "/bytes/{n}", handler: bytes),
        Route(["GET"], "/json") { _ in .json(slideshow, trailingNewline: false) },
    ]

    private static let bodyFields: [HTTPBinEcho.Field] = [.url, .args, .form, .data, .origin, .headers, .files, .json]

    private static func echo(_ context: RouteContext, _ fields: [HTTPBinEcho.Field]) -> HTTPResponse {
        .json(HTTPBinEcho(request: context.request).dictionary(fields))
    }

    // MARK: /status

    /// `/status/418` or a random pick from `/status/200,201` or weighted `/status/200:0.9,500:0.1`.
    private static func status(_ context: RouteContext) -> HTTPResponse {
        let invalid = HTTPResponse.text("Invalid status code", status: 400)
        var choices: [(code: Int, weight: Double)] = []
        for choice in (context.parameters["codes"] ?? "").split(separator: ",", omittingEmptySubsequences: false) {
            let parts = choice.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count <= 2,
                let code = Int(parts[0].trimmingCharacters(in: .whitespaces)),
                let weight = parts.count == 2 ? Double(parts[1].trimmingCharacters(in: .whitespaces)) : 1
            else {
                return invalid
            }
            choices.append((code, weight))
        }
        guard let code = weightedChoice(choices) else { return invalid }
        return statusResponse(code)
    }

    private static func weightedChoice(_ choices: [(code: Int, weight: Double)]) -> Int? {
        let total = choices.reduce(0) { $0 + max($1.weight, 0) }
        guard total > 0, total.isFinite else { return choices.first?.code }
        var remaining = Double.random(in: 0..<total)
        for choice in choices where choice.weight > 0 {
            if remaining < choice.weight { return choice.code }
            remaining -= choice.weight
        }
        return choices.last?.code
    }

    /// httpbin's `status_code` helper. Where it assigns headers it replaces them outright, which is
    /// why redirects and 401 carry no `Content-Type`.
    static func statusResponse(_ code: Int) -> HTTPResponse {
        // werkzeug rejects codes outside three digits with an exception, so httpbin answers 500.
        guard (100...999).contains(code) else { return .serverError }
        let plain = [HTTPHeader("Content-Type", "text/html; charset=utf-8")]
        switch code {
        case 301, 302, 303, 305, 307:
            return HTTPResponse(status: code, headers: [HTTPHeader("Location", "/redirect/1")])
        case 401:
            return HTTPResponse(status: code, headers: [HTTPHeader("WWW-Authenticate", "Basic realm=\"Fake Realm\"")])
        case 402:
            return HTTPResponse(
                status: code, headers: [HTTPHeader("x-more-info", "http://vimeo.com/22053820")],
                body: Data("Fuck you, pay me!".utf8))
        case 406:
            let body =
                #"{"message": "Client did not request a supported media type.", "accept": "#
                + #"["image/webp", "image/svg+xml", "image/jpeg", "image/png", "image/*"]}"#
            return HTTPResponse(
                status: code, headers: [HTTPHeader("Content-Type", "application/json")],
                body: Data(body.utf8))
        case 304, 407:
            // httpbin sets Proxy-Authenticate on 407, but gunicorn drops it as a hop-by-hop header,
            // and werkzeug drops Content-Type from a 304: what clients actually get is neither.
            return HTTPResponse(status: code)
        case 418:
            return HTTPResponse(
                status: code, headers: [HTTPHeader("x-more-info", "http://tools.ietf.org/html/rfc2324")],
                body: Data(teapot.utf8))
        default:
            return HTTPResponse(status: code, headers: plain)
        }
    }

    // MARK: /response-headers

    /// Each query parameter becomes a response header, and the body is a JSON object of all the
    /// response's headers, `Content-Length` included. That length depends on the body, so the
    /// body is rebuilt until it stops changing, exactly as httpbin does.
    private static func responseHeaders(_ context: RouteContext) -> HTTPResponse {
        let added = context.request.queryItems.map { HTTPHeader($0.name, $0.value) }
        // Framing headers from a query string would corrupt the response; header syntax is checked too.
        let framing: Set<String> = ["content-length", "transfer-encoding", "connection"]
        for header in added {
            guard !header.name.isEmpty,
                header.name.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ":") }),
                !header.value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }),
                !framing.contains(header.name.lowercased())
            else {
                return .text("Invalid header", status: 400)
            }
        }
        let contentType = HTTPHeader("Content-Type", "application/json")
        var response = HTTPResponse.json([String: Any]())
        for _ in 0..<10 {
            let described = [contentType, HTTPHeader("Content-Length", String(response.body.count))] + added
            var object: [String: Any] = [:]
            for header in described {
                let values = described.values(for: header.name)
                object[header.name] = values.count == 1 ? values[0] as Any : values as Any
            }
            let next = HTTPResponse.json(object)
            if next.body == response.body { break }
            response = next
        }
        response.headers = [contentType] + added
        return response
    }

    // MARK: /basic-auth

    private static func basicAuth(_ context: RouteContext) -> HTTPResponse {
        guard let user = context.parameters["user"], let password = context.parameters["passwd"],
            let credentials = basicCredentials(context.request.headers.first("Authorization")),
            credentials.user == user, credentials.password == password
        else {
            return statusResponse(401)
        }
        return .json(["authenticated": true, "user": user])
    }

    /// `Authorization: Basic base64(user:password)`, split at the first colon as werkzeug does.
    private static func basicCredentials(_ header: String?) -> (user: String, password: String)? {
        guard let header, let space = header.firstIndex(of: " "),
            header[..<space].lowercased() == "basic",
            let decoded = Data(
                base64Encoded: header[space...].trimmingCharacters(in: .whitespaces),
                options: .ignoreUnknownCharacters),
            let text = String(data: decoded, encoding: .utf8)
        else {
            return nil
        }
        guard let colon = text.firstIndex(of: ":") else { return (text, "") }
        return (String(text[..<colon]), String(text[text.index(after: colon)...]))
    }

    // MARK: /delay

    /// Like httpbin: at most 10 seconds; a delay that is not a number, or negative, is a 500.
    private static func delay(_ context: RouteContext) -> HTTPResponse {
        guard let requested = Double((context.parameters["delay"] ?? "").trimmingCharacters(in: .whitespaces)),
            requested >= 0
        else {
            return .serverError
        }
        context.sleep(seconds: min(requested, 10))
        return echo(context, [.url, .args, .form, .data, .origin, .headers, .files])
    }

    // MARK: /bytes

    /// `n` random bytes (at most 100 KiB); `?seed=` makes them repeatable (not Python's sequence).
    private static func bytes(_ context: RouteContext) -> HTTPResponse {
        // Flask's `int` converter only matches digits; anything else is no route at all.
        let digits = context.parameters["n"] ?? ""
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return .notFound }
        let count = min(Int(digits) ?? Int.max, 100 * 1024)

        let data: Data
        if let seedText = context.request.queryItems.first(where: { $0.name.lowercased() == "seed" })?.value {
            guard let seed = Int(seedText.trimmingCharacters(in: .whitespaces)) else { return .serverError }
            var generator = SplitMix64(seed: UInt64(bitPattern: Int64(seed)))
            data = randomData(count: count, using: &generator)
        } else {
            var generator = SystemRandomNumberGenerator()
            data = randomData(count: count, using: &generator)
        }
        return HTTPResponse(status: 200, headers: [HTTPHeader("Content-Type", "application/octet-stream")], body: data)
    }

    /// Eight bytes per draw: a draw per byte is slow in debug builds, which tests use.
    private static func randomData(count: Int, using generator: inout some RandomNumberGenerator) -> Data {
        var data = Data(capacity: count + 8)
        while data.count < count {
            withUnsafeBytes(of: generator.next().littleEndian) { data.append(contentsOf: $0) }
        }
        return Data(data.prefix(count))
    }

    // MARK: Fixed documents

    private static let teapot = #"""

            -=[ teapot ]=-

               _...._
             .'  _ _ `.
            | ."` ^ `". _,
            \_;`"---"`|//
              |       ;/
              \_     _/
                `"""`

        """#

    /// The document httpbin's `/json` serves.
    private static var slideshow: [String: Any] {
        [
            "slideshow": [
                "title": "Sample Slide Show",
                "date": "date of publication",
                "author": "Yours Truly",
                "slides": [
                    ["type": "all", "title": "Wake up to WonderWidgets!"],
                    [
                        "type": "all",
                        "title": "Overview",
                        "items": ["Why <em>WonderWidgets</em> are great", "Who <em>buys</em> WonderWidgets"],
                    ],
                ],
            ] as [String: Any]
        ]
    }
}
