import Errand
import Foundation

/// HAR entries recorded under a `Redaction`: values the input places in masked header fields,
/// cookies, query items, form fields, JSON fields and the URL's password — and that the response,
/// its headers or the error then quote back — must not reach the entry, in plain or base64 text.
///
/// The same exchange is also recorded with every masked secret replaced by a neutral value of the
/// same length; a secret counts as leaked only when it is in the first entry and not in that one,
/// so text Errand writes itself (a reason phrase, the placeholder), or public values happen to
/// spell, is never taken for a leak.
enum RedactionTarget {
    private static let maskableHeaders = ["Authorization", "Cookie", "Set-Cookie", "X-Api-Key"]
    private static let names = ["token", "key", "password", "user", "q", "a b", "t+k"]
    private static let publicAlphabet = ["a", "b", "c", "1", "2", "-", "_", "."]

    /// Where a value goes: a secret, by index, or public text.
    private enum Value {
        case secret(Int)
        case text(String)
    }

    /// The exchange, as a recipe: built once with the secrets, once with neutral values.
    private struct Recipe {
        var password: Int?
        var query: [(name: String, value: Value)] = []
        var headers: [(name: String, value: Value, bearer: Bool)] = []
        var cookie: Int?
        var bodyKind = 0
        var bodyFields: [(name: String, value: Value, nested: Bool)] = []
        var status = 200
        var responseKind = 0
        var echoes: [Value] = []
        var setCookie: Int?
        var failure: Int?
        var maximumBodySize = 1 << 20
    }

    static func run(_ data: Data) {
        var input = FuzzInput(data)
        let flags = input.byte()
        let redaction = Redaction(
            headers: Set(maskableHeaders.enumerated().filter { flags & (1 << $0.offset) != 0 }.map(\.element)),
            queryItems: Set(names.filter { _ in input.bool() }),
            jsonFields: Set(names.filter { _ in input.bool() }))
        // The fourth is a response's own (`Set-Cookie`): masked by name, never looked for elsewhere,
        // as only the request's values are; so no echo quotes it.
        let secrets = (0..<4).map { _ in input.string(upTo: 16) }
        var recipe = Recipe()
        var masked: Set<Int> = []
        func value() -> Value {
            input.bool() ? .secret(Int(input.byte()) % 3) : .text(input.string(from: publicAlphabet, upTo: 6))
        }
        func maskedValue(_ isMasked: Bool, allowing isAllowed: (String) -> Bool = { _ in true }) -> Value {
            let value = value()
            guard case .secret(let index) = value else { return value }
            // A secret only goes where a name masks it; elsewhere it would be the caller's own disclosure.
            guard isMasked, isAllowed(secrets[index]) else { return .text("pub") }
            masked.insert(index)
            return value
        }
        if input.bool() {
            recipe.password = Int(input.byte()) % 3
            masked.insert(recipe.password!)
        }
        for _ in 0..<Int(input.byte()) % 4 {
            let name = names[Int(input.byte()) % names.count]
            recipe.query.append((name, maskedValue(redaction.queryItems.contains(name))))
        }
        for _ in 0..<Int(input.byte()) % 3 {
            let name = (maskableHeaders + ["X-Public"])[Int(input.byte()) % 5]
            // One value per field: a second would replace the first, which then was never sent.
            guard name != "Cookie" && name != "Set-Cookie", !recipe.headers.contains(where: { $0.name == name })
            else { continue }
            let value = maskedValue(redaction.headers.contains(name), allowing: isFieldValue)
            recipe.headers.append((name, value, input.bool()))
        }
        if input.bool(), redaction.headers.contains("Cookie") {
            let index = Int(input.byte()) % 3
            if isCookieValue(secrets[index]) {
                recipe.cookie = index
                masked.insert(index)
            }
        }
        recipe.bodyKind = Int(input.byte()) % 6
        for _ in 0..<Int(input.byte()) % 4 {
            let name = names[Int(input.byte()) % names.count]
            guard !recipe.bodyFields.contains(where: { $0.name == name }) else { continue }
            let isMasked =
                recipe.bodyKind == 1 || recipe.bodyKind == 5
                ? redaction.queryItems.union(redaction.jsonFields).contains(name)
                : recipe.bodyKind == 2 ? redaction.jsonFields.contains(name) : false
            // A CR could end a multipart part early: the value would then not be the part's.
            let value = maskedValue(isMasked, allowing: { recipe.bodyKind != 5 || !$0.contains("\r") })
            recipe.bodyFields.append((name, value, input.bool()))
        }
        recipe.status = [200, 302, 404, 500][Int(input.byte()) % 4]
        recipe.responseKind = Int(input.byte()) % 4
        for _ in 0..<Int(input.byte()) % 4 { recipe.echoes.append(value()) }
        // Its text must not be in another secret, which an echo may quote.
        if input.bool(), redaction.headers.contains("Set-Cookie"), isCookieValue(secrets[3]),
            !secrets[..<3].contains(where: { $0.contains(secrets[3]) })
        {
            recipe.setCookie = 3
            masked.insert(3)
        }
        if input.bool() {
            recipe.failure = Int(input.byte()) % 3
            masked.remove(3)  // no response arrives to set the cookie
        }
        if input.bool() { recipe.maximumBodySize = Int(input.byte()) }

        // Only the values looked for change: text made of public values or of values masked by name
        // only — an echo the caller chose to disclose, next to the body's own bytes — stays, so it
        // cannot pass for a masked value.
        let lookedFor = masked.filter { isLookedFor(secrets[$0]) }
        let neutral = secrets.enumerated().map { index, secret in
            guard lookedFor.contains(index) else { return secret }
            return "Z\(index)" + String(repeating: "q", count: max(secret.utf8.count - 2, 0))
        }
        let recorded = texts(of: entry(recipe, secrets: secrets, redaction: redaction))
        let baseline = texts(of: entry(recipe, secrets: neutral, redaction: redaction))
        for index in lookedFor.sorted() {
            let secret = secrets[index]
            var forms = [secret.trimmingCharacters(in: .whitespaces), formEncoded(secret)]
            // Base64 text of the value itself; bodies recorded as base64 are searched decoded, which
            // finds the value at any offset. (A prefix of its base64 would also match text that only
            // shares the value's first bytes.)
            forms.append(Data(secret.utf8).base64EncodedString())
            for form in forms
            where form.count >= 4 && recorded.contains(where: { holds($0, form) })
                && !baseline.contains(where: { holds($0, form) })
            {
                let entry = recorded.filter { holds($0, form) }.map(\.debugDescription).joined(separator: "\n  ")
                fatalError(
                    "the masked value \(secret.debugDescription) reached the entry as \(form.debugDescription):\n  \(entry)"
                )
            }
        }
    }

    // MARK: The exchange

    private static func entry(_ recipe: Recipe, secrets: [String], redaction: Redaction) -> Data {
        func text(_ value: Value) -> String {
            switch value {
            case .secret(let index): secrets[index]
            case .text(let text): text
            }
        }
        var url = "https://"
        if let password = recipe.password { url += "user:\(formEncoded(secrets[password]))@" }
        url += "h.example/p"
        if !recipe.query.isEmpty {
            url +=
                "?"
                + recipe.query.map { "\(formEncoded($0.name))=\(formEncoded(text($0.value)))" }.joined(separator: "&")
        }
        guard let requestURL = URL(string: url) else { fatalError("cannot build \(url)") }
        var headers: [String: String] = [:]
        for header in recipe.headers { headers[header.name] = (header.bearer ? "Bearer " : "") + text(header.value) }
        if let cookie = recipe.cookie { headers["Cookie"] = "theme=dark; sid=\(secrets[cookie])" }
        var body: Data?
        switch recipe.bodyKind {
        case 1:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
            body = Data(
                recipe.bodyFields.map { "\(formEncoded($0.name))=\(formEncoded(text($0.value)))" }
                    .joined(separator: "&").utf8)
        case 2:
            headers["Content-Type"] = "application/json"
            var object: [String: Any] = [:]
            var inner: [String: Any] = ["id": 1]
            for field in recipe.bodyFields {
                if field.nested {
                    inner[field.name] = text(field.value)
                } else {
                    object[field.name] = text(field.value)
                }
            }
            if inner.count > 1 { object["outer"] = [inner] }
            body = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        case 3:
            headers["Content-Type"] = "text/plain"
            body = Data((["note:"] + recipe.echoes.map(text)).joined(separator: " ").utf8)
        case 4:
            headers["Content-Type"] = "application/octet-stream"
            body = Data([0xFF, 0x00] + (recipe.echoes.map(text)).joined().utf8)
        case 5:
            headers["Content-Type"] = "multipart/form-data; boundary=errand-fuzz"
            let parts = recipe.bodyFields.map {
                "--errand-fuzz\r\nContent-Disposition: form-data; name=\"\($0.name)\"\r\n\r\n\(text($0.value))\r\n"
            }
            body = Data((parts.joined() + "--errand-fuzz--\r\n").utf8)
        default:
            body = nil
        }
        let request = TransportRequest(
            url: requestURL, method: body == nil ? "GET" : "POST", headers: headers, body: body.map(sliced))

        let echoed = recipe.echoes.map(text)
        var responseHeaders = ["X-Echo": echoed.joined(separator: " ")]
        if let setCookie = recipe.setCookie { responseHeaders["Set-Cookie"] = "sid=\(secrets[setCookie]); Path=/" }
        if recipe.status == 302 { responseHeaders["Location"] = url }
        let responseBody: Data
        switch recipe.responseKind {
        case 0:
            responseHeaders["Content-Type"] = "application/json"
            let object: [String: Any] = ["url": url, "echo": echoed, "headers": headers]
            responseBody =
                (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
                ?? Data()
        case 1:
            responseHeaders["Content-Type"] = "text/plain; charset=utf-8"
            responseBody = Data(([url] + echoed).joined(separator: "\n").utf8)
        case 2:
            responseHeaders["Content-Type"] = "application/octet-stream"
            responseBody = Data([0xC3, 0x28] + Array(echoed.joined(separator: "|").utf8))
        default:
            responseBody = body ?? Data()
        }
        let response = Response(statusCode: recipe.status, headers: responseHeaders, data: sliced(responseBody))
        let error = recipe.failure.map { ErrandError.decoding("the server said \(secrets[$0]) at \(url)") }
        return HAREntryBuilder.entryJSON(
            redaction: redaction, maximumBodySize: recipe.maximumBodySize, request: request,
            response: error == nil ? response : nil, error: error)
    }

    // MARK: Helpers

    /// `data` as a slice of a larger buffer, as an app's or a transport's `Data` may be: its
    /// indices start past zero, so masking must not read from 0.
    private static func sliced(_ data: Data) -> Data {
        (Data("~~".utf8) + data)[2...]
    }

    /// Every string the entry holds, base64 bodies decoded; each is searched on its own.
    private static func texts(of entry: Data) -> [String] {
        guard let object = try? JSONSerialization.jsonObject(with: entry) else { fatalError("the entry is no JSON") }
        var texts: [String] = []
        func walk(_ value: Any) {
            switch value {
            case let object as [String: Any]:
                let encoding = (object["encoding"] ?? object["_encoding"]) as? String
                var isDecoded = false
                if encoding == "base64", let text = object["text"] as? String, let bytes = Data(base64Encoded: text) {
                    texts.append(String(decoding: bytes, as: UTF8.self))
                    isDecoded = true
                }
                // A base64 text is searched decoded only: its letters may spell a short value by chance.
                for (key, value) in object where !(isDecoded && key == "text") {
                    texts.append(key)
                    walk(value)
                }
            case let array as [Any]: array.forEach(walk)
            case let text as String: texts.append(text)
            default: texts.append("\(value)")
            }
        }
        walk(object)
        return texts
    }

    /// Whether `text` holds `part`, compared as UTF-8: Foundation's `contains` stops the part at a NUL.
    private static func holds(_ text: String, _ part: String) -> Bool {
        Array(text.utf8).firstRange(of: Array(part.utf8)) != nil
    }

    /// Whether the entry is searched for `secret`: shorter values are masked by name only, as
    /// looking for them everywhere would mangle the file.
    private static func isLookedFor(_ secret: String) -> Bool {
        let trimmed = secret.trimmingCharacters(in: .whitespaces)
        return trimmed.count >= 4 && trimmed != "<redacted>"
    }

    /// Form encoding, as a browser writes a field: only unreserved characters stay as they are.
    private static func formEncoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics.intersection(
            CharacterSet(charactersIn: Unicode.Scalar(0)..<Unicode.Scalar(128)))
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    /// What may stand in a header field's value: no control characters, no surrounding space.
    private static func isFieldValue(_ text: String) -> Bool {
        !text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
            && text.trimmingCharacters(in: .whitespaces) == text
    }

    /// RFC 6265 `cookie-octet`s only.
    private static func isCookieValue(_ text: String) -> Bool {
        !text.isEmpty
            && text.unicodeScalars.allSatisfy {
                (0x21...0x7E).contains($0.value) && !"\";,\\ ".unicodeScalars.contains($0)
            }
    }
}
