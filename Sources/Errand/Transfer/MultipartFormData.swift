import Foundation

/// A `multipart/form-data` body, built part by part: fields, in-memory data and files.
///
/// A request fills one in through its `constructingBody` closure:
///
/// ```swift
/// var constructingBody: (@Sendable (inout MultipartFormData) -> Void)? {
///     { form in
///         form.append("A holiday", name: "title")
///         form.append(URL(fileURLWithPath: "/tmp/beach.jpg"), name: "photo")
///     }
/// }
/// ```
///
/// File parts are not read when appended: their bytes are streamed when the body is encoded, so a
/// large upload never sits in memory whole. Each part is written as browsers write it: a
/// `Content-Disposition` header with the quoted `name` (and `filename` for files), a `Content-Type`
/// for files and typed data, a blank line, the bytes, and CRLF; the body ends with `--boundary--`.
public struct MultipartFormData: Sendable {
    /// The boundary between parts, without the leading `--`.
    /// Default: `errand.boundary.` followed by 16 random hexadecimal digits.
    public let boundary: String

    /// The value for the request's `Content-Type` header: `multipart/form-data; boundary=…`.
    public var contentType: String {
        let isToken = !boundary.isEmpty && boundary.utf8.allSatisfy(\.isHTTPTokenCharacter)
        return "multipart/form-data; boundary=" + (isToken ? boundary : "\"\(boundary)\"")
    }

    private var parts: [Part] = []

    /// Creates an empty body.
    ///
    /// - Parameter boundary: The separator between parts; it must not occur in any part's bytes.
    ///   Default: `errand.boundary.` followed by 16 random hexadecimal digits, which is vanishingly
    ///   unlikely to occur by chance.
    public init(boundary: String = MultipartFormData.randomBoundary()) {
        self.boundary = boundary
    }

    /// A fresh random boundary: `errand.boundary.` followed by 16 hexadecimal digits.
    @usableFromInline
    static func randomBoundary() -> String {
        let digits = String(UInt64.random(in: .min ... .max), radix: 16)
        return "errand.boundary." + String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// Appends bytes held in memory.
    ///
    /// - Parameters:
    ///   - data: The part's bytes.
    ///   - name: The form field name.
    ///   - fileName: Sent as the part's `filename`, which makes servers treat it as a file upload.
    ///     Default `nil`, none.
    ///   - mimeType: The part's `Content-Type`. Default `nil`: inferred from `fileName`'s extension
    ///     when there is a file name (`application/octet-stream` when unknown), else no `Content-Type`.
    public mutating func append(_ data: Data, name: String, fileName: String? = nil, mimeType: String? = nil) {
        let type = mimeType ?? fileName.map { Self.mimeType(forExtension: ($0 as NSString).pathExtension) }
        parts.append(Part(name: name, fileName: fileName, mimeType: type, content: .data(data)))
    }

    /// Appends a file, streamed from disk when the body is encoded; it is not read now.
    ///
    /// - Parameters:
    ///   - fileURL: A local file URL. A missing or unreadable file fails encoding with
    ///     ``ErrandError/fileSystem(_:)``.
    ///   - name: The form field name.
    ///   - fileName: Sent as the part's `filename`. Default `nil`: the URL's last path component.
    ///   - mimeType: The part's `Content-Type`. Default `nil`: inferred from the URL's extension
    ///     (`application/octet-stream` when unknown).
    public mutating func append(_ fileURL: URL, name: String, fileName: String? = nil, mimeType: String? = nil) {
        parts.append(
            Part(
                name: name, fileName: fileName ?? fileURL.lastPathComponent,
                mimeType: mimeType ?? Self.mimeType(forExtension: fileURL.pathExtension), content: .file(fileURL)))
    }

    /// Appends a plain text field, encoded as UTF-8, with no `Content-Type`.
    ///
    /// - Parameters:
    ///   - value: The field's value.
    ///   - name: The form field name.
    public mutating func append(_ value: String, name: String) {
        parts.append(Part(name: name, fileName: nil, mimeType: nil, content: .data(Data(value.utf8))))
    }

    // MARK: Request arguments

    /// The body a request sends: its `arguments` as fields first, then the parts its
    /// `constructingBody` closure adds.
    static func build(
        arguments: [String: any Sendable]?, constructingBody: (@Sendable (inout MultipartFormData) -> Void)?
    ) throws(ErrandError) -> MultipartFormData {
        var form = MultipartFormData()
        try form.appendArguments(arguments)
        constructingBody?(&form)
        return form
    }

    /// Appends request arguments as text fields, one part per leaf, named and rendered as the form
    /// encoder renders them: keys sorted, nested values as `a[b]` and `a[]`, booleans as `1` and `0`,
    /// `NSNull` as an empty value.
    mutating func appendArguments(_ arguments: [String: any Sendable]?) throws(ErrandError) {
        guard let arguments else { return }
        try ArgumentValue.object(arguments).forEachFormField { name, value in append(value, name: name) }
    }

    // MARK: Encoding

    /// The exact size of the encoded body in bytes, for `Content-Length`; files are measured, not read.
    ///
    /// - Throws: ``ErrandError/fileSystem(_:)`` when a file part is missing or unreadable.
    public func contentLength() throws(ErrandError) -> Int64 {
        var length = Int64(closingDelimiter.count)
        for part in parts {
            length += Int64(header(for: part).count + Self.crlf.count)
            switch part.content {
            case .data(let data): length += Int64(data.count)
            case .file(let url): length += try part.fileSize(of: url)
            }
        }
        return length
    }

    /// The whole encoded body in memory; for small bodies; use ``write(to:)`` for large files.
    ///
    /// - Throws: ``ErrandError/fileSystem(_:)`` when a file part is missing or unreadable.
    public func encodedData() throws(ErrandError) -> Data {
        var output = Data()
        for part in parts {
            output += header(for: part)
            switch part.content {
            case .data(let data):
                output += data
            case .file(let url):
                _ = try part.fileSize(of: url)
                do {
                    output += try Data(contentsOf: url)
                } catch {
                    throw part.unreadable(url, reason: error.localizedDescription)
                }
            }
            output += Self.crlf
        }
        output += closingDelimiter
        return output
    }

    /// Streams the encoded body into a file, with owner-only permissions (0600), replacing any
    /// file already there.
    ///
    /// Memory stays bounded whatever the body's size: headers and small parts are gathered in a
    /// buffer of at most 1 MiB, and file parts are copied in chunks. On failure the partial output
    /// file is removed.
    ///
    /// - Returns: The number of bytes written, which is the body's `Content-Length`.
    /// - Throws: ``ErrandError/fileSystem(_:)`` when a file part is missing or unreadable, or the
    ///   output file cannot be written.
    @discardableResult
    public func write(to fileURL: URL) throws(ErrandError) -> Int64 {
        let path = fileURL.path
        // The body may hold private data.
        let output = try OwnerOnlyFile.openForWriting(fileURL, subject: "multipart body")
        do {
            let written = try stream(to: output)
            try output.close()
            return written
        } catch {
            try? output.close()
            try? FileManager.default.removeItem(at: fileURL)
            if let error = error as? ErrandError { throw error }
            throw .fileSystem("multipart body: cannot write \(path): \(error.localizedDescription)")
        }
    }

    /// Request bodies up to this size are encoded in memory; larger ones into a temporary file.
    static let inMemoryLimit = 1 << 20

    /// Encodes the body into a new temporary file (0600), which the caller deletes when done;
    /// returns the file and its length.
    func writeTemporaryFile() throws(ErrandError) -> (URL, Int64) {
        let file = FileManager.default.temporaryDirectory
            .appendingPathComponent("errand-upload-\(UUID().uuidString).multipart", isDirectory: false)
        return (file, try write(to: file))
    }

    private static let bufferLimit = 1 << 20
    private static let fileChunkSize = 256 << 10

    private func stream(to output: FileHandle) throws -> Int64 {
        var buffer = Data()
        var written: Int64 = 0
        func flush() throws {
            guard !buffer.isEmpty else { return }
            try output.write(contentsOf: buffer)
            written += Int64(buffer.count)
            buffer.removeAll(keepingCapacity: true)
        }
        func emit(_ bytes: Data) throws {
            if buffer.count + bytes.count > Self.bufferLimit { try flush() }
            if bytes.count >= Self.bufferLimit {
                // Already in memory: copying it into the buffer would only double it.
                try output.write(contentsOf: bytes)
                written += Int64(bytes.count)
            } else {
                buffer += bytes
            }
        }
        for part in parts {
            try emit(header(for: part))
            switch part.content {
            case .data(let data):
                try emit(data)
            case .file(let url):
                _ = try part.fileSize(of: url)
                try flush()
                written += try part.copy(url, to: output, chunkSize: Self.fileChunkSize)
            }
            try emit(Self.crlf)
        }
        try emit(closingDelimiter)
        try flush()
        return written
    }

    // MARK: Wire format

    private static let crlf = Data("\r\n".utf8)

    private var closingDelimiter: Data { Data("--\(boundary)--\r\n".utf8) }

    /// The delimiter line and header block that open a part, up to and including the blank line.
    private func header(for part: Part) -> Data {
        var text = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(Self.escaped(part.name))\""
        if let fileName = part.fileName { text += "; filename=\"\(Self.escaped(fileName))\"" }
        text += "\r\n"
        if let mimeType = part.mimeType { text += "Content-Type: \(Self.escaped(mimeType))\r\n" }
        text += "\r\n"
        return Data(text.utf8)
    }

    /// Escapes a header value as the HTML standard and browsers do, so a name cannot end its
    /// quoted string or inject header lines: `"` → `%22`, CR → `%0D`, LF → `%0A`.
    static func escaped(_ value: String) -> String {
        guard value.utf8.contains(where: { $0 == UInt8(ascii: "\"") || $0 == 0x0D || $0 == 0x0A }) else {
            return value
        }
        var output = ""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": output += "%22"
            case "\r": output += "%0D"
            case "\n": output += "%0A"
            default: output.unicodeScalars.append(scalar)
            }
        }
        return output
    }

    /// The MIME type for a file extension, matched case-insensitively; `application/octet-stream`
    /// when unknown.
    static func mimeType(forExtension pathExtension: String) -> String {
        switch pathExtension.lowercased() {
        case "json": "application/json"
        case "txt": "text/plain"
        case "html", "htm": "text/html"
        case "jpg", "jpeg": "image/jpeg"
        case "png": "image/png"
        case "gif": "image/gif"
        case "pdf": "application/pdf"
        case "zip": "application/zip"
        case "mp4": "video/mp4"
        case "csv": "text/csv"
        case "xml": "application/xml"
        default: "application/octet-stream"
        }
    }
}

extension MultipartFormData {
    private struct Part: Sendable {
        enum Content: Sendable {
            case data(Data)
            case file(URL)
        }

        let name: String
        let fileName: String?
        let mimeType: String?
        let content: Content

        func unreadable(_ url: URL, reason: String) -> ErrandError {
            UploadFile.unreadable(url, subject: "multipart part \"\(name)\"", reason: reason)
        }

        /// The size of a file part, checking that it can be read at all.
        func fileSize(of url: URL) throws(ErrandError) -> Int64 {
            try UploadFile.size(of: url, subject: "multipart part \"\(name)\"")
        }

        /// Copies a file part into `output` chunk by chunk; returns the bytes copied.
        func copy(_ url: URL, to output: FileHandle, chunkSize: Int) throws -> Int64 {
            let input: FileHandle
            do {
                input = try FileHandle(forReadingFrom: url)
            } catch {
                throw unreadable(url, reason: error.localizedDescription)
            }
            defer { try? input.close() }
            var copied: Int64 = 0
            while true {
                let chunk: Data
                do {
                    chunk = try input.read(upToCount: chunkSize) ?? Data()
                } catch {
                    throw unreadable(url, reason: error.localizedDescription)
                }
                if chunk.isEmpty { return copied }
                try output.write(contentsOf: chunk)
                copied += Int64(chunk.count)
            }
        }
    }
}
