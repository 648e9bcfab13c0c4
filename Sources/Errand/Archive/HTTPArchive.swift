import Foundation

/// An HTTP Archive (HAR) 1.2 file, field for field as the specification names them
/// (http://www.softwareishard.com/blog/har-12-spec/): what ``HARRecorder`` writes, and what a
/// replay reads — also from files browsers wrote. Fields the specification makes optional are
/// optional here, and fields it does not name (browsers add `_initiator` and the like) are ignored.
struct HTTPArchive: Codable, Equatable, Sendable {
    var log: Log

    /// The root object.
    struct Log: Codable, Equatable, Sendable {
        /// `"1.2"` for what Errand writes.
        var version: String
        var creator: Creator
        var browser: Creator?
        var entries: [Entry]
        var comment: String?
    }

    /// The application that wrote the file (or, as `browser`, the browser).
    struct Creator: Codable, Equatable, Sendable {
        var name: String
        var version: String
        var comment: String?
    }

    /// One exchange: a request and the response it got.
    struct Entry: Codable, Equatable, Sendable {
        var pageref: String?
        /// ISO 8601 with milliseconds and time zone, such as `2026-11-25T18:00:29.123Z`; kept as
        /// text so a file with any ISO 8601 spelling reads.
        var startedDateTime: String
        /// Milliseconds the exchange took: the sum of the known ``Timings`` phases.
        var time: Double
        var request: Request
        var response: Response
        var cache: Cache
        var timings: Timings
        var serverIPAddress: String?
        var connection: String?
        var comment: String?
        /// A WebSocket's messages, in Chrome's field; absent for other requests.
        var _webSocketMessages: [SocketMessage]?
    }

    /// The request as sent.
    struct Request: Codable, Equatable, Sendable {
        var method: String
        var url: String
        var httpVersion: String
        var cookies: [Cookie]
        var headers: [NameValue]
        var queryString: [NameValue]
        var postData: PostData?
        /// `-1`: the header block's size on the wire is unknown.
        var headersSize: Int
        /// Bytes of the body; `0` for none, `-1` when unknown.
        var bodySize: Int
        var comment: String?
    }

    /// The response as received.
    struct Response: Codable, Equatable, Sendable {
        /// `0` when no response arrived.
        var status: Int
        var statusText: String
        var httpVersion: String
        var cookies: [Cookie]
        var headers: [NameValue]
        var content: Content
        /// The `Location` of a redirect; empty otherwise.
        var redirectURL: String
        var headersSize: Int
        var bodySize: Int
        var comment: String?
        /// The trailer fields that followed the body, sorted and masked as ``headers`` are;
        /// `nil` when none came. Not in HAR 1.2: a custom field, as the specification allows.
        var trailers: [NameValue]? = nil

        enum CodingKeys: String, CodingKey {
            case status, statusText, httpVersion, cookies, headers, content, redirectURL, headersSize, bodySize
            case comment
            case trailers = "_trailers"
        }
    }

    /// A cookie sent or set.
    struct Cookie: Codable, Equatable, Sendable {
        var name: String
        var value: String
        var path: String?
        var domain: String?
        var expires: String?
        var httpOnly: Bool?
        var secure: Bool?
        var comment: String?
    }

    /// A header field or a query item.
    struct NameValue: Codable, Equatable, Sendable {
        var name: String
        var value: String
        var comment: String?
    }

    /// A request body.
    struct PostData: Codable, Equatable, Sendable {
        var mimeType: String
        /// The body as text, or, when ``encoding`` is `"base64"`, base64 text of its bytes.
        var text: String?
        /// A form-encoded body's fields.
        var params: [Param]?
        /// `"base64"` for a binary body. Not in HAR 1.2, which has no way to store binary request
        /// bodies: a custom field, which the specification allows with a leading underscore.
        var encoding: String?
        var comment: String?

        enum CodingKeys: String, CodingKey {
            case mimeType, text, params, comment
            case encoding = "_encoding"
        }
    }

    /// A field of a form-encoded or multipart request body.
    struct Param: Codable, Equatable, Sendable {
        var name: String
        var value: String?
        var fileName: String?
        var contentType: String?
        var comment: String?
    }

    /// A response body.
    struct Content: Codable, Equatable, Sendable {
        /// Bytes of the body as received, whatever ``text`` holds of it.
        var size: Int
        var compression: Int?
        var mimeType: String
        var text: String?
        /// `"base64"` when ``text`` is base64 text of binary bytes.
        var encoding: String?
        var comment: String?
    }

    /// The state of a cache entry before or after the request.
    struct CacheState: Codable, Equatable, Sendable {
        var expires: String?
        var lastAccess: String
        var eTag: String
        var hitCount: Int
        var comment: String?
    }

    /// What a cache had to do with the exchange; empty when nothing is known.
    struct Cache: Codable, Equatable, Sendable {
        var beforeRequest: CacheState?
        var afterRequest: CacheState?
        var comment: String?
    }

    /// Milliseconds of each phase; `-1` for a phase that did not happen or is unknown, where the
    /// specification allows it. `ssl` is also counted in `connect`, as HAR 1.1 readers expect.
    struct Timings: Codable, Equatable, Sendable {
        var blocked: Double?
        var dns: Double?
        var connect: Double?
        var send: Double
        var wait: Double
        var receive: Double
        var ssl: Double?
        var comment: String?
    }
}

// MARK: Reading and writing

extension HTTPArchive {
    /// The archive in `data`, read from `source` (a path, for the error).
    ///
    /// - Throws: ``ErrandError/decoding(_:)`` saying where the text stops being an HTTP Archive.
    init(data: Data, source: String) throws(ErrandError) {
        do {
            self = try JSONDecoder().decode(HTTPArchive.self, from: data)
        } catch let error as DecodingError {
            throw .decoding("\(source) is not an HTTP Archive (HAR): \(error.summary)")
        } catch {
            throw .decoding("\(source) is not an HTTP Archive (HAR): \(error.localizedDescription)")
        }
    }

    /// The archive in the file at `url`.
    ///
    /// - Throws: ``ErrandError/fileSystem(_:)`` when it cannot be read, ``ErrandError/decoding(_:)``
    ///   when it is not HAR.
    init(contentsOf url: URL) throws(ErrandError) {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw .fileSystem("read HAR \(url.path): \(error.localizedDescription)")
        }
        try self.init(data: data, source: url.path)
    }

    /// An empty archive, as Errand writes one.
    init(entries: [Entry] = []) {
        self.init(
            log: Log(
                version: "1.2", creator: Creator(name: "Errand", version: UserAgent.errandVersion), entries: entries))
    }

    /// The archive as JSON, pretty-printed with sorted keys.
    func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // Every value is a string, a whole number or a finite one: encoding cannot fail.
        return (try? encoder.encode(self)) ?? Data()
    }

    /// Writes ``encoded()`` to `url`, replacing the file atomically: a reader never sees half of it.
    ///
    /// - Throws: ``ErrandError/fileSystem(_:)`` naming the path and the reason.
    func write(to url: URL) throws(ErrandError) {
        do {
            try encoded().write(to: url, options: .atomic)
        } catch {
            throw .fileSystem("write HAR to \(url.path): \(error.localizedDescription)")
        }
    }
}
