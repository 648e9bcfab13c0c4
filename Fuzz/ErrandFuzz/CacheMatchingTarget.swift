import Errand
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What decides which stored response answers which request, and what of it: one request
/// stores a response, another asks, each with the header fields it goes out with (the
/// session's added to its own), and a `Range` is cut from a stored body that is a `Data` slice.
///
/// Checked, besides no trap: the storing request always matches its own variant; the asking one
/// matches exactly when a plain reading of RFC 9111 §4.1 says it sends every selecting field
/// alike; a request that carried `Authorization` binds the response to it unless the response
/// may be shared (§3.5), and no variant keeps a credential's value (`Authorization`, `Cookie`, a
/// field whose name marks a secret); `Vary: *` stores nothing;
/// a response is stored only as RFC 9111 §3 allows; a range answer is the slice's bytes, with
/// a `Content-Range` and `Content-Length` that say so, or the stored response unchanged.
enum CacheMatchingTarget {
    private static let names = [
        "Accept-Language", "accept-language", "Authorization", "Cookie", "X-Tier", "Proxy-Authorization", "Range",
        "X-Api-Key",
    ]
    /// The fields whose values are credentials, by lower-case name: a variant keeps their hash.
    private static let credentials: Set = ["authorization", "cookie", "proxy-authorization", "x-api-key", ":credentials"]
    private static let values = ["en", "fr", " en ", "en, fr", "fr,en", "Bearer a", "Bearer b", "a=1", "", "x,,y"]
    private static let directives = [
        "public", "private", "max-age=60", "s-maxage=60", "no-store", "no-cache", "must-revalidate",
        "must-understand", "private=\"X-Tier\"",
    ]
    /// A session that adds fields of its own, as `httpAdditionalHeaders` does; no cookies, so the
    /// target stays pure.
    private static let session: SentFields = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpAdditionalHeaders = ["Accept-Language": "de", "X-Tier": "base"]
        configuration.httpShouldSetCookies = false
        return SentFields(configuration: configuration)
    }()

    static func run(_ data: Data) {
        var input = FuzzInput(data)
        let storing = sent(headers(&input))
        let asking = sent(headers(&input))
        let control = CacheControl(
            (0..<Int(input.byte()) % 4).map { _ in directives[input.int(below: directives.count)] }
                .joined(separator: ", "))
        let vary = input.bool() ? nil : varyField(&input)
        storage(&input, control)
        matching(vary: vary, control: control, storing: storing, asking: asking)
        range(&input)
    }

    // MARK: The request as sent

    private static func headers(_ input: inout FuzzInput) -> [String: String] {
        var headers: [String: String] = [:]
        for _ in 0..<Int(input.byte()) % 5 {
            headers[names[input.int(below: names.count)]] = values[input.int(below: values.count)]
        }
        return headers
    }

    /// The fields a request with `headers` goes out with; the session's never replace its own.
    private static func sent(_ headers: [String: String]) -> [String: String] {
        let request = TransportRequest(url: URL(fileURLWithPath: "/"), headers: headers)
        let sent = session.headers(of: request)
        for (name, value) in headers {
            // A field whose name marks a secret is compared, and kept, as its hash.
            guard name.lowercased() == "x-api-key" else {
                require(sent[name] == value, "the session replaced \(name) of \(headers): \(sent)")
                continue
            }
            require(sent[name]?.hasPrefix("hash ") == true, "\(name) goes to the cache as \(sent[name] ?? "nil")")
        }
        for name in ["Accept-Language", "X-Tier"] {
            require(
                sent.keys.filter { $0.lowercased() == name.lowercased() }.count >= 1,
                "the session's \(name) is missing from \(sent)")
        }
        return sent
    }

    private static func varyField(_ input: inout FuzzInput) -> String {
        let members = (0..<Int(input.byte()) % 4).map { _ in
            input.int(below: 8) == 0 ? "*" : names[input.int(below: names.count)]
        }
        return members.joined(separator: input.bool() ? "," : " ,  ")
    }

    // MARK: Matching

    private static func matching(
        vary: String?, control: CacheControl, storing: [String: String], asking: [String: String]
    ) {
        let selecting = HTTPStorageRules.selectingFields(vary: vary, response: control, requestHeaders: storing)
        let variant = HTTPStorageRules.variant(vary: selecting, requestHeaders: storing)
        let names = (selecting ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            .filter { !$0.isEmpty }
        guard !names.contains("*") else {
            return require(variant == nil, "Vary \(vary ?? "nil") gave the variant \(variant ?? [:])")
        }
        guard let variant else { return require(false, "no variant for \(selecting ?? "nil")") }
        require(Set(variant.keys) == Set(names), "variant \(variant) for \(selecting ?? "nil")")
        let carriesCredential = value("authorization", in: storing) != nil
        let mayBeShared = (has("public", control) || has("s-maxage", control)) && !has("private", control)
        require(
            !carriesCredential || mayBeShared || variant.keys.contains("authorization"),
            "a response to \(storing) under \(control.directives) is not bound to its credential")
        for (name, stored) in variant where credentials.contains(name) {
            guard let stored else { continue }
            require(stored.hasPrefix("hash ") && stored.utf8.count == 37, "\(name) kept as \(stored.debugDescription)")
        }
        require(
            HTTPStorageRules.matches(variant, requestHeaders: storing), "\(storing) does not match its own \(variant)")
        let expected = names.allSatisfy {
            normalized(value($0, in: storing), $0) == normalized(value($0, in: asking), $0)
        }
        require(
            HTTPStorageRules.matches(variant, requestHeaders: asking) == expected,
            "\(asking) against \(variant) (stored by \(storing)): expected \(expected)")
    }

    private static func has(_ name: String, _ control: CacheControl) -> Bool {
        control.directives.contains { $0.name == name }
    }

    /// A field's value by name in any case; the first spelling found when several are there.
    private static func value(_ name: String, in headers: [String: String]) -> String? {
        headers[name] ?? headers.first { $0.key.lowercased() == name }?.value
    }

    /// The plain reading: list members trimmed, empty ones dropped; `Accept-Language` without
    /// case, spaces or order.
    private static func normalized(_ value: String?, _ name: String) -> String? {
        guard let value else { return nil }
        let members = value.split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard name == "accept-language" else { return members.joined(separator: ",") }
        return members.map { $0.lowercased().replacingOccurrences(of: " ", with: "") }.sorted().joined(separator: ",")
    }

    // MARK: Storage

    private static func storage(_ input: inout FuzzInput, _ control: CacheControl) {
        let method = ["GET", "HEAD", "POST", "get"][input.int(below: 4)]
        let status = [200, 203, 204, 206, 302, 304, 404, 500, 100, 299][input.int(below: 10)]
        let request = CacheControl(input.bool() ? "no-store" : input.bool() ? "no-cache" : nil)
        let headers = input.bool() ? ["Expires": "Thu, 01 Jan 2099 00:00:00 GMT"] : [:]
        let stored = HTTPStorageRules.mayStore(
            method: method, statusCode: status, request: request, response: control, responseHeaders: headers)
        guard stored else { return }
        let context = "\(method) \(status) \(control.directives) after \(request.directives)"
        require(method.uppercased() == "GET" && status >= 200 && status != 206 && status != 304, context)
        require(!has("no-store", request), context)
        require(!has("no-store", control) || has("must-understand", control), context)
        require(
            has("public", control) || has("private", control) || has("max-age", control) || !headers.isEmpty
                || ResponseFreshness.heuristicallyCacheableStatusCodes.contains(status), context)
    }

    // MARK: A range of a stored body

    private static func range(_ input: inout FuzzInput) {
        let offset = Int(input.byte())
        let body = input.bytes(upTo: 64)
        let buffer = Data(repeating: 0x2A, count: offset) + Data(body)
        let slice = buffer[offset...]
        let field = input.string(from: ["bytes=", "-", "0", "1", "9", ",", " ", "x", "B"], upTo: 12)
        var headers = ["Range": field]
        let etag = #""e1""#
        if input.bool() { headers["If-Range"] = input.bool() ? etag : "W/\(etag)" }
        let status = input.bool() ? 200 : 404
        let stored = Response(
            statusCode: status, headers: ["ETag": etag, "X-Kept": "1"], data: slice, isDataFromCache: true)
        let answer = ByteRangeAnswer.answer(headers, from: stored)
        guard answer.statusCode == 206 else {
            return require(answer.statusCode == status && answer.data == slice, "\(headers) changed \(stored)")
        }
        require(status == 200 && headers["If-Range"] != "W/\(etag)", "\(headers) cut a \(status)")
        guard let range = ByteRangeAnswer.range(field, length: body.count) else {
            return require(false, "\(field.debugDescription) cut though it reads as no range")
        }
        require(Array(answer.data) == Array(body[range]), "\(field.debugDescription) of \(body): \(Array(answer.data))")
        require(
            answer.value(forHeader: "Content-Range")
                == "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(body.count)"
                && answer.value(forHeader: "Content-Length") == String(range.count)
                && answer.value(forHeader: "X-Kept") == "1",
            "\(field.debugDescription): \(answer.headers)")
    }
}
