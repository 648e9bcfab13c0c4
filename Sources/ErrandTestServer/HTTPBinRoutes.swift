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
        Route(["GET"], "/range/{numbytes}", handler: range),
        Route(["GET"], "/json") { _ in .json(slideshow, trailingNewline: false) },
    ]

    private static let bodyFields: [HTTPBinEcho.Field] = [.url, .args, .form, .data, .origin, .headers, .files, .json]

    private static func echo(_ context: RouteContext, _ fields: [HTTPBinEcho.Field]) -> HTTPResponse {
        HTTPBinEcho(request: context.request).response(fields)
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
        var body = HTTPResponse.jsonBody([String: Any]()) ?? Data()
        for _ in 0..<10 {
            let described = [contentType, HTTPHeader("Content-Length", String(body.count))] + added
            var object: [String: Any] = [:]
            for header in described {
                let values = described.values(for: header.name)
                object[header.name] = values.count == 1 ? values[0] as Any : values as Any
            }
            guard let next = HTTPResponse.jsonBody(object) else { return .serverError }
            if next == body { break }
            body = next
        }
        return HTTPResponse(status: 200, headers: [contentType] + added, body: body)
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

    // MARK: /range

    /// `abcd…z` repeating, `numbytes` of it (at most 100 KiB), honouring `Range` with httpbin's own
    /// lenient parsing, in `chunk_size` pieces spread over `duration` seconds.
    private static func range(_ context: RouteContext) -> HTTPResponse {
        // Flask's `int` converter only matches digits; anything else is no route at all.
        let digits = context.parameters["numbytes"] ?? ""
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return .notFound }
        let numbytes = Int(digits) ?? Int.max
        let significant = digits.drop { $0 == "0" }
        let etag = HTTPHeader("ETag", "range" + (significant.isEmpty ? "0" : significant))
        let acceptRanges = HTTPHeader("Accept-Ranges", "bytes")
        let plainText = HTTPHeader("Content-Type", "text/plain; charset=utf-8")
        guard numbytes > 0, numbytes <= 100 * 1024 else {
            return HTTPResponse(
                status: 404, headers: [etag, acceptRanges, plainText],
                body: Data("number of bytes must be in the range (0, 102400]".utf8))
        }

        // httpbin looks parameters up case-insensitively, taking the first name that matches.
        func parameter(_ name: String) -> String? {
            context.request.queryItems.first { $0.name.lowercased() == name }?.value
        }
        var chunkSize = 10 * 1024
        if let text = parameter("chunk_size") {
            guard let size = PythonNumber.int(text) else { return .serverError }
            chunkSize = max(1, size)
        }
        var duration = 0.0
        if let text = parameter("duration") {
            guard let seconds = PythonNumber.float(text) else { return .serverError }
            duration = seconds
        }

        let (first, last) = requestedRange(context.request.headers.values(for: "Range"), size: numbytes)
        guard first <= last, (0..<numbytes).contains(first), (0..<numbytes).contains(last) else {
            return HTTPResponse(
                status: 416,
                headers: [etag, acceptRanges, HTTPHeader("Content-Range", "bytes */\(numbytes)"), plainText])
        }
        let headers = [
            HTTPHeader("Content-Type", "application/octet-stream"), etag, acceptRanges,
            HTTPHeader("Content-Range", "bytes \(first)-\(last)/\(numbytes)"),
        ]
        let status = first == 0 && last == numbytes - 1 ? 200 : 206
        let length = last + 1 - first

        // httpbin sleeps after each full chunk and before a final short one; time.sleep raises on
        // a negative or non-finite pause, which ends the response right there.
        let pausePerByte = duration / Double(numbytes)
        var sent = length
        if !(pausePerByte >= 0 && pausePerByte.isFinite) {
            guard length >= chunkSize else { return .gunicornServerError }
            sent = chunkSize
        }
        let server = context.server
        return HTTPResponse(status: status, headers: headers, length: length) { [sent, chunkSize] write in
            func pause(_ count: Int) {
                if pausePerByte > 0 && pausePerByte.isFinite { server.sleep(seconds: pausePerByte * Double(count)) }
            }
            var position = first
            while position < first + sent {
                let count = min(chunkSize, first + sent - position)
                if count < chunkSize { pause(count) }
                let chunk = Data((position..<position + count).map { UInt8(ascii: "a") + UInt8($0 % 26) })
                guard write(chunk) else { return }
                if count == chunkSize { pause(count) }
                position += count
            }
        }
    }

    /// httpbin's `get_request_range`: `bytes=F-L`, `bytes=F-` or `bytes=-S`, where each bound that
    /// Python's `int()` rejects counts as missing. The result may lie outside the content.
    private static func requestedRange(_ values: [String], size: Int) -> (first: Int, last: Int) {
        // Repeated headers reach httpbin joined with commas, as gunicorn passes them on.
        let text = values.joined(separator: ",").trimmingCharacters(in: .whitespacesAndNewlines)
        var left: Int?
        var right: Int?
        let sides = text.split(separator: "=", omittingEmptySubsequences: false)
        if text.hasPrefix("bytes"), sides.count == 2 {
            let bounds = sides[1].split(separator: "-", omittingEmptySubsequences: false)
            left = PythonNumber.int(bounds[0])
            right = bounds.count > 1 ? PythonNumber.int(bounds[1]) : nil
        }
        switch (left, right) {
        case (nil, nil): return (0, size - 1)
        case (nil, let suffix?): return (max(0, size &- suffix), size - 1)
        case (let first?, nil): return (first, size - 1)
        case (let first?, let last?): return (first, last)
        }
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
