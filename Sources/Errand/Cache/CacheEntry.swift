import Foundation

/// One cached response and what decides whether it may be served, stored as one file so that
/// body and metadata are replaced together or not at all.
///
/// File layout: the magic `ERRANDC2`, the metadata's length as 4 big-endian bytes, the metadata
/// as JSON, then the body. The metadata records the body's length and hash, so a truncated or
/// corrupted file is detected rather than served.
package struct CacheEntry: Sendable {
    struct Metadata: Codable, Sendable {
        /// ``CacheKey/identityHash``: the identity itself may hold tokens.
        var identityHash: String
        var statusCode: Int
        var headers: [String: String]
        /// Seconds since 1970 by ``NetworkConfig/cacheClock``.
        var storedAt: Double
        var cacheVersion: Int
        /// A hash of `cacheSensitiveData`, so the file does not hold the value itself.
        var sensitiveDataHash: String?
        var appVersion: String
        var bodyLength: Int
        var bodyHash: String
        /// When the request was sent, seconds since 1970 by ``NetworkConfig/cacheClock``; stored
        /// for ``BaseRequest/followsHTTPCaching``, whose age counts the round trip.
        var requestTime: Double?
        /// The request's values of the fields the response's `Vary` names (RFC 9111 §4.1), for
        /// ``BaseRequest/followsHTTPCaching``; `nil` for an entry stored without it.
        var variant: [String: String?]?
        /// Set on a marker that stands in a URL's key for its variants, each stored under a key
        /// of its own; `nil` on an entry that holds a response.
        var variants: Variants?
    }

    /// What a URL's variants are stored by (RFC 9111 §4.1): the lower-case names of the fields
    /// its responses `Vary` on, and an id each variant's key includes, so that a URL invalidated
    /// and stored again never finds the variants stored before.
    struct Variants: Codable, Sendable, Equatable {
        var names: [String]
        var id: String
    }

    let metadata: Metadata
    package let body: Data

    /// The entry of `response` under `key`. `bodyHash`, when given, is the hash of
    /// `response.data`, known from an entry that held the same bytes.
    init(
        response: Response, key: CacheKey, settings: CacheSettings, appVersion: String, storedAt: Date,
        bodyHash: String? = nil, requestTime: Date? = nil, variant: [String: String?]? = nil
    ) {
        metadata = Metadata(
            identityHash: key.identityHash, statusCode: response.statusCode,
            headers: Self.storedFields(of: response.headers, dropsHopByHop: settings.followsHTTPCaching),
            storedAt: storedAt.timeIntervalSince1970, cacheVersion: settings.version,
            sensitiveDataHash: settings.sensitiveDataHash, appVersion: appVersion,
            bodyLength: response.data.count, bodyHash: bodyHash ?? Self.hash(of: response.data),
            requestTime: requestTime?.timeIntervalSince1970, variant: variant)
        body = response.data
    }

    /// The marker under a URL's `key` that sends lookups on to its variants' keys.
    init(variants: Variants, key: CacheKey, appVersion: String, storedAt: Date) {
        metadata = Metadata(
            identityHash: key.identityHash, statusCode: 0, headers: [:], storedAt: storedAt.timeIntervalSince1970,
            cacheVersion: 0, appVersion: appVersion, bodyLength: 0, bodyHash: Self.hash(of: Data()),
            variants: variants)
        body = Data()
    }

    /// Errand's bookkeeping, kept by a storage in ``CachedEntry/details``.
    private struct Details: Codable {
        var identityHash: String
        var bodyHash: String
        var requestTime: Double?
        var variant: [String: String?]?
        var variants: Variants?
    }

    /// The entry as a ``CacheStorage`` keeps it.
    var cached: CachedEntry {
        let details = Details(
            identityHash: metadata.identityHash, bodyHash: metadata.bodyHash, requestTime: metadata.requestTime,
            variant: metadata.variant, variants: metadata.variants)
        // Sorted, so that the same entry always has the same details.
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return CachedEntry(
            statusCode: metadata.statusCode, headers: metadata.headers, body: body,
            storedAt: Date(timeIntervalSince1970: metadata.storedAt), cacheVersion: metadata.cacheVersion,
            appVersion: metadata.appVersion, sensitiveDataHash: metadata.sensitiveDataHash,
            // A struct of strings and numbers always encodes.
            details: (try? encoder.encode(details)) ?? Data())
    }

    /// The entry a storage handed back; `nil` when its details are not ones Errand wrote. The
    /// body's checksum is the one stored with the details unless `hashingBody`: for a body that
    /// may not be the one Errand gave.
    init?(cached: CachedEntry, hashingBody: Bool = false) {
        guard let details = try? JSONDecoder().decode(Details.self, from: cached.details) else { return nil }
        metadata = Metadata(
            identityHash: details.identityHash, statusCode: cached.statusCode, headers: cached.headers,
            storedAt: cached.storedAt.timeIntervalSince1970, cacheVersion: cached.cacheVersion,
            sensitiveDataHash: cached.sensitiveDataHash, appVersion: cached.appVersion, bodyLength: cached.body.count,
            bodyHash: hashingBody ? Self.hash(of: cached.body) : details.bodyHash, requestTime: details.requestTime,
            variant: details.variant, variants: details.variants)
        body = cached.body
    }

    /// Parses a cache file; `nil` when it is not one, or is truncated or corrupted.
    package init?(file: Data) {
        let magic = Self.magic
        guard file.count >= magic.count + 4, file.starts(with: magic) else { return nil }
        let lengthStart = file.startIndex + magic.count
        let metadataLength = file[lengthStart..<lengthStart + 4].reduce(0) { $0 << 8 | Int($1) }
        let metadataStart = lengthStart + 4
        guard metadataLength <= file.endIndex - metadataStart,
            let metadata = try? JSONDecoder().decode(
                Metadata.self, from: file[metadataStart..<metadataStart + metadataLength])
        else { return nil }
        let body = file[(metadataStart + metadataLength)...]
        guard body.count == metadata.bodyLength, Self.hash(of: body) == metadata.bodyHash else { return nil }
        self.metadata = metadata
        self.body = Data(body)
    }

    /// The bytes of the cache file.
    package func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        // Encoding a struct of strings and numbers cannot fail; an empty record would read back as corrupt.
        let json = (try? encoder.encode(metadata)) ?? Data()
        var file = Self.magic
        file.reserveCapacity(Self.magic.count + 4 + json.count + body.count)
        file.append(contentsOf: withUnsafeBytes(of: UInt32(json.count).bigEndian, Array.init))
        file.append(json)
        file.append(body)
        return file
    }

    /// Memory the entry holds, for the memory layer's budget.
    var cost: Int {
        body.count + metadata.identityHash.utf8.count
            + metadata.headers.reduce(0) { $0 + $1.key.count + $1.value.count }
    }

    /// The entry as served, `age` seconds after it was stored; with `ageField`, its `Age` header
    /// field says so, as an HTTP cache's must (RFC 9111 §5.1). `withoutBody` answers a `HEAD`.
    func response(isStale: Bool, age: TimeInterval, ageField: Bool = false, withoutBody: Bool = false) -> Response {
        var headers = metadata.headers
        if ageField { headers.setHeaderField("Age", String(Int(age.isNaN ? 0 : min(max(age, 0), 2_147_483_648)))) }
        return Response(
            statusCode: metadata.statusCode, headers: headers, data: withoutBody ? Data() : body,
            isDataFromCache: true, isStale: isStale, age: age)
    }

    /// The fields an entry keeps: not the cookies, which a cached response never sets again and
    /// its file must not hold; for an HTTP cache, not those about one connection either, nor
    /// those a qualified `no-cache` lists (RFC 9111 §3.1, §5.2.2.4), where YTKNetwork's cache
    /// serves every other field as it arrived.
    private static func storedFields(of headers: [String: String], dropsHopByHop: Bool) -> [String: String] {
        let unstored =
            dropsHopByHop
            ? connectionOptions(in: headers).union(
                CacheControl(headers.headerField("Cache-Control")).fieldNames(of: "no-cache")) : []
        return headers.filter { name, _ in
            let name = name.lowercased()
            guard name != "set-cookie", name != "set-cookie2" else { return false }
            return !dropsHopByHop || !hopByHopFields.contains(name) && !unstored.contains(name)
        }
    }

    /// Fields that describe one connection, not the response: never stored, nor merged from a `304`.
    static let hopByHopFields: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "te", "transfer-encoding", "upgrade",
    ]

    /// The lower-case names `headers`' `Connection` field lists, which are hop-by-hop too.
    static func connectionOptions(in headers: [String: String]) -> Set<String> {
        Set((headers.headerField("Connection") ?? "").split(separator: ",").map { $0.trimmed.lowercased() })
    }

    /// Version 2 keeps a hash of the identity, not the identity; a version 1 file reads as unreadable.
    private static let magic = Data("ERRANDC2".utf8)

    private static func hash(of body: Data) -> String {
        var hash = FNV1a()
        hash.update(body)
        return hash.hex
    }
}
