import Foundation

/// How long a response stays fresh and how old it is, as a private HTTP cache works them out
/// (RFC 9111 §4.2) from its header fields and when it was requested and received.
package struct ResponseFreshness: Equatable, Sendable {
    /// Seconds the response is fresh for, from its generation at the origin (§4.2.1).
    package let lifetime: TimeInterval
    /// Whether ``lifetime`` was guessed from `Last-Modified` (§4.2.2), which the server never said.
    package let isHeuristic: Bool
    /// How old the response was when it arrived: the larger of what its `Date` and its `Age`
    /// say, the latter plus the round trip (§4.2.3, `corrected_initial_age`).
    package let initialAge: TimeInterval
    /// When the response arrived (`response_time`).
    package let responseTime: Date

    /// Statuses a cache may give a heuristic lifetime without being told it may (§4.2.2, RFC
    /// 9110 §15.1).
    package static let heuristicallyCacheableStatusCodes: Set<Int> = [
        200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501,
    ]

    /// The share of the time since `Last-Modified` that a heuristic lifetime takes (§4.2.2).
    static let heuristicFraction = 0.1

    /// - Parameters:
    ///   - headers: The response's fields, repeated ones joined by commas.
    ///   - requestTime: When the request was sent (`request_time`).
    ///   - responseTime: When the response arrived (`response_time`).
    package init(statusCode: Int, headers: [String: String], requestTime: Date, responseTime: Date) {
        let cacheControl = CacheControl(headers.headerField("Cache-Control"))
        // A response without a Date, or with one that cannot be read, was generated as it arrived.
        let date = headers.headerField("Date").flatMap { HTTPDate.parse($0, now: responseTime) } ?? responseTime
        let explicit = Self.explicitLifetime(cacheControl, headers: headers, date: date, now: responseTime)
        if let explicit {
            lifetime = explicit
            isHeuristic = false
        } else {
            lifetime = Self.heuristicLifetime(statusCode, cacheControl, headers: headers, date: date, now: responseTime)
            isHeuristic = lifetime > 0
        }
        let apparentAge = max(0, responseTime.timeIntervalSince(date))
        let responseDelay = max(0, responseTime.timeIntervalSince(requestTime))
        let correctedAge = TimeInterval(Self.age(headers) ?? 0) + responseDelay
        initialAge = max(apparentAge, correctedAge)
        self.responseTime = responseTime
    }

    /// How old the response is at `now` (§4.2.3, `current_age`).
    package func age(at now: Date) -> TimeInterval {
        initialAge + max(0, now.timeIntervalSince(responseTime))
    }

    /// Whether the response is fresh at `now`.
    package func isFresh(at now: Date) -> Bool {
        lifetime > age(at: now)
    }

    /// How long past its lifetime the response is at `now`; `0` while it is fresh.
    func staleness(at now: Date) -> TimeInterval {
        max(0, age(at: now) - lifetime)
    }

    /// The first `Age` value when it is `delta-seconds`; `nil` when absent or invalid, which a
    /// cache ignores (cache-tests.fyi `age-parse-*`).
    package static func age(_ headers: [String: String]) -> Int? {
        guard let value = headers.headerField("Age") else { return nil }
        let first = value.split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return CacheControl.deltaSeconds(first.trimmed)
    }

    /// `max-age`, else `Expires` less `Date`; `nil` when the response says neither. An `Expires`
    /// that cannot be read means already expired (§5.3). `s-maxage` is for shared caches only.
    private static func explicitLifetime(
        _ cacheControl: CacheControl, headers: [String: String], date: Date, now: Date
    ) -> TimeInterval? {
        if let maxAge = cacheControl.seconds("max-age") { return TimeInterval(maxAge) }
        guard let expires = headers.headerField("Expires") else { return nil }
        guard let expiry = HTTPDate.parse(expires, now: now) else { return 0 }
        return max(0, expiry.timeIntervalSince(date))
    }

    /// A tenth of the time between `Last-Modified` and `Date`, for a status that allows a
    /// heuristic or a response marked `public`; `0` otherwise.
    private static func heuristicLifetime(
        _ statusCode: Int, _ cacheControl: CacheControl, headers: [String: String], date: Date, now: Date
    ) -> TimeInterval {
        guard heuristicallyCacheableStatusCodes.contains(statusCode) || cacheControl.contains("public"),
            let lastModified = headers.headerField("Last-Modified").flatMap({ HTTPDate.parse($0, now: now) })
        else { return 0 }
        return max(0, date.timeIntervalSince(lastModified)) * heuristicFraction
    }
}
