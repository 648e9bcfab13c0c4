import Foundation

/// A finished response: status, headers and body, from the network or the cache.
public struct Response: Sendable {
    /// The HTTP status code.
    public let statusCode: Int
    /// The response header fields. Look names up with ``value(forHeader:)``, which ignores case.
    public let headers: [String: String]
    /// The body. Empty for a download, whose body is at ``fileURL``.
    public let data: Data
    /// Whether the response was served from the cache rather than the network.
    public let isDataFromCache: Bool
    /// Whether this cached response is older than the request's `cacheTimeInSeconds`: served by
    /// ``CachePolicy/offlineFallback``, ``CachePolicy/staleWhileRevalidate`` or cache-then-network.
    public let isStale: Bool
    /// Whether the network was asked about an expired cache entry and answered `304 Not
    /// Modified`: the body is the stored one, the header fields the stored ones updated by the
    /// `304`'s, and the entry's age starts again. ``isDataFromCache`` is `false`, since the
    /// server was asked. Default `false`.
    public let isRevalidated: Bool
    /// How old the response is, in seconds, when it comes from the cache: the time since it was
    /// stored or last revalidated, by ``NetworkConfig/cacheClock``. `0` right after a
    /// revalidation; `nil` for a response straight from the network. Default `nil`.
    public let age: TimeInterval?
    /// Where a download was written; `nil` for in-memory responses.
    public let fileURL: URL?
    /// The trailer fields that followed the body — a checksum, a status a server knew only at
    /// the end — joined as ``headers`` are; look names up with ``value(forTrailer:)``. Empty when
    /// none came, and for a response from the cache, which keeps only the head and body.
    /// Default empty.
    public let trailers: [String: String]

    /// Creates a response; useful for stubbing.
    public init(
        statusCode: Int, headers: [String: String] = [:], data: Data = Data(), isDataFromCache: Bool = false,
        isStale: Bool = false, isRevalidated: Bool = false, age: TimeInterval? = nil, fileURL: URL? = nil,
        trailers: [String: String] = [:]
    ) {
        self.trailers = trailers
        self.isStale = isStale
        self.isRevalidated = isRevalidated
        self.age = age
        self.statusCode = statusCode
        self.headers = headers
        self.data = data
        self.isDataFromCache = isDataFromCache
        self.fileURL = fileURL
    }

    /// The value of a header field, matched case-insensitively.
    public func value(forHeader name: String) -> String? {
        headers.headerField(name)
    }

    /// The value of a trailer field, matched case-insensitively; `nil` when it did not come.
    public func value(forTrailer name: String) -> String? {
        trailers.headerField(name)
    }

    /// The body as text, decoded with the charset of `Content-Type` (UTF-8 when none is named);
    /// `nil` when the bytes are not valid in that encoding.
    public var string: String? {
        String(data: data, encoding: textEncoding)
    }

    /// The body parsed as JSON (`[String: Any]`, `[Any]`, `String`, `NSNumber`/`Double`/`Bool` or `NSNull`);
    /// `nil` when the body is empty or not JSON.
    public var jsonObject: Any? {
        guard !data.isEmpty else { return nil }
        return try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
    }

    /// Decodes the JSON body into `type`.
    ///
    /// - Throws: ``ErrandError/decoding(_:)`` naming the type and the coding path that failed.
    public func decode<T: Decodable>(_ type: T.Type, decoder: JSONDecoder = JSONDecoder()) throws(ErrandError) -> T {
        do {
            return try decoder.decode(type, from: data)
        } catch let error as DecodingError {
            throw .decoding("\(T.self): \(error.summary)")
        } catch {
            throw .decoding("\(T.self): \(error)")
        }
    }

    private var textEncoding: String.Encoding {
        guard let contentType = value(forHeader: "Content-Type")?.lowercased(),
            let charsetRange = contentType.range(of: "charset=")
        else { return .utf8 }
        let charset = contentType[charsetRange.upperBound...]
            .prefix { $0 != ";" }
            .trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
        switch charset {
        case "iso-8859-1", "latin1": return .isoLatin1
        case "us-ascii", "ascii": return .ascii
        case "utf-16": return .utf16
        case "windows-1252": return .windowsCP1252
        default: return .utf8
        }
    }
}

extension DecodingError {
    /// One line naming what failed and where, instead of Foundation's nested dump.
    var summary: String {
        func path(_ context: Context) -> String {
            "$" + context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        }
        switch self {
        case .typeMismatch(let type, let context):
            return "\(path(context)): expected \(type). \(context.debugDescription)"
        case .valueNotFound(let type, let context):
            return "\(path(context)): expected \(type), found null. \(context.debugDescription)"
        case .keyNotFound(let key, let context):
            return "\(path(context)): missing key \"\(key.stringValue)\""
        case .dataCorrupted(let context):
            return "\(path(context)): \(context.debugDescription)"
        @unknown default:
            return "\(self)"
        }
    }
}
