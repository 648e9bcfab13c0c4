import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Errand's own endpoints for resumable-download and upload tests, not part of httpbin:
/// `/download/{numbytes}` and `/upload`. ``TestServer``'s documentation describes them.
enum TransferRoutes {
    static let all: [Route] = [
        Route(["GET"], "/download/{numbytes}", handler: download),
        Route(["POST", "PUT"], "/upload", streamsBody: true, handler: upload),
    ]

    /// Big enough to keep loopback busy, small enough that any download costs the server little.
    private static let chunkSize = 64 * 1024

    // MARK: /download

    private enum RangeRequest {
        case whole
        case part(Range<Int>)
        case unsatisfiable
    }

    private static func download(_ context: RouteContext) -> HTTPResponse {
        let digits = context.parameters["numbytes"] ?? ""
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let size = Int(digits) else {
            return .notFound
        }
        let query = context.request.queryItems
        // The outer optional is "valid", the inner one "given": a typo must fail loudly, not be ignored.
        func count(_ name: String, minimum: Int) -> Int?? {
            guard let text = query.last(where: { $0.name == name })?.value else { return .some(nil) }
            guard let value = Int(text), value >= minimum else { return nil }
            return value
        }
        guard let dropAfter = count("drop_after", minimum: 0), let rate = count("rate", minimum: 1) else {
            return .text("drop_after must be a whole number ≥ 0 and rate one ≥ 1\n", status: 400)
        }
        let ignoreRange = query.contains { $0.name == "ignore_range" && ["1", "true", "yes"].contains($0.value) }

        let version = context.server.downloadVersion
        let etag = "\"v\(version)-\(size)\""
        let lastModified = httpDate(secondsSince1970: 1_700_000_000 &+ version &* 3600)
        var headers = [
            HTTPHeader("ETag", etag), HTTPHeader("Last-Modified", lastModified), HTTPHeader("Accept-Ranges", "bytes"),
        ]

        var range = 0..<size
        var status = 200
        // RFC 9110 §13.1.5: a validator that is not the current one means "send it all".
        let ifRange = context.request.headers.first("If-Range")
        if !ignoreRange, ifRange == nil || ifRange == etag || ifRange == lastModified,
            let header = context.request.headers.first("Range")
        {
            switch byteRange(header, size: size) {
            case .whole:
                break
            case .unsatisfiable:
                headers.append(HTTPHeader("Content-Range", "bytes */\(size)"))
                return HTTPResponse(status: 416, headers: headers)
            case .part(let part):
                range = part
                status = 206
                headers.append(HTTPHeader("Content-Range", "bytes \(part.lowerBound)-\(part.upperBound - 1)/\(size)"))
            }
        }
        headers.append(HTTPHeader("Content-Type", "application/octet-stream"))

        let end = range.lowerBound + min(dropAfter ?? range.count, range.count)
        let piece = rate.map { max(1, min(chunkSize, $0 / 10)) } ?? chunkSize
        let server = context.server
        return HTTPResponse(status: status, headers: headers, length: range.count) { [range] write in
            var offset = range.lowerBound
            while offset < end {
                let next = offset + min(piece, end - offset)
                guard write(TestServer.downloadContent(size: size, version: version, range: offset..<next)) else {
                    return
                }
                if let rate, next < end { server.sleep(seconds: Double(next - offset) / Double(rate)) }
                offset = next
            }
        }
    }

    /// One range of RFC 9110 §14.1.2: `bytes=N-`, `N-M` or `-S`. Anything else (several ranges,
    /// another unit, bad syntax) is ignored, as the RFC allows, and the whole body served.
    private static func byteRange(_ header: String, size: Int) -> RangeRequest {
        let value = header.trimmingCharacters(in: .whitespaces)
        guard value.lowercased().hasPrefix("bytes="), let dash = value.firstIndex(of: "-") else { return .whole }
        let first = value[value.index(value.startIndex, offsetBy: 6)..<dash].trimmingCharacters(in: .whitespaces)
        let last = value[value.index(after: dash)...].trimmingCharacters(in: .whitespaces)
        func number(_ text: String) -> Int? {
            guard !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            return Int(text) ?? Int.max
        }
        if first.isEmpty {
            guard let suffix = number(last) else { return .whole }
            return suffix > 0 && size > 0 ? .part(max(0, size - suffix)..<size) : .unsatisfiable
        }
        guard let start = number(first) else { return .whole }
        var end = size
        if !last.isEmpty {
            guard let lastByte = number(last), lastByte >= start else { return .whole }
            end = min(lastByte, size - 1) + 1
        }
        return start < size ? .part(start..<end) : .unsatisfiable
    }

    /// IMF-fixdate (`Tue, 14 Nov 2023 22:13:20 GMT`), built by hand: formatters depend on locale.
    private static func httpDate(secondsSince1970 seconds: Int) -> String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func twoDigits(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[Int(parts.tm_wday) % 7]), \(twoDigits(parts.tm_mday)) \(months[Int(parts.tm_mon) % 12]) "
            + "\(1900 + parts.tm_year) \(twoDigits(parts.tm_hour)):\(twoDigits(parts.tm_min)):"
            + "\(twoDigits(parts.tm_sec)) GMT"
    }

    // MARK: /upload

    /// Reads the body as it arrives, keeping only its length and checksum.
    private static func upload(_ context: RouteContext) -> HTTPResponse {
        var checksum = Checksum()
        var count = 0
        while let chunk = context.body?.next() {
            checksum.update(chunk)
            count += chunk.count
        }
        let contentType = context.request.headers.first("Content-Type")
        return .json([
            "bytes": count, "checksum": checksum.hexDigits, "content_type": contentType.map { $0 as Any } ?? NSNull(),
        ])
    }
}
