import Foundation

/// The answers of ``ResumableUploadRoutes``: the interim `104`s, the target's final answer, the
/// upload resource's own, and the draft's problem documents.
enum ResumableUploadAnswer {
    /// The draft version spoken: a `104` carries it, and one asked for another is not sent.
    static let interopVersion: Int64 = 8
    static let limit = HTTPHeader("Upload-Limit", "max-size=\(ResumableUpload.maxSize)")
    private static let problemTypes = "https://iana.org/assignments/http-problem-types#"

    static func location(of id: String) -> String {
        "/resumable/uploads/\(id)"
    }

    /// The `104` that announces a new upload resource.
    static func announcement(of id: String) -> Data {
        interim(["Location: \(location(of: id))", "\(limit.name): \(limit.value)"])
    }

    /// The `104` that tells the offset reached while a body arrives.
    static func progress(_ offset: Int64) -> Data {
        interim(["Upload-Offset: \(offset)"])
    }

    private static func interim(_ fields: [String]) -> Data {
        let lines =
            ["HTTP/1.1 104 Upload Resumption Supported"] + fields + ["Upload-Draft-Interop-Version: \(interopVersion)"]
        return Data((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
    }

    /// What the target `/resumable/{name}` answers once it has the whole representation;
    /// `upload` is `nil` for an upload that was not resumable.
    static func target(name: String, method: String, size: Int64, checksum: Checksum, upload: String?) -> HTTPResponse {
        var response = HTTPResponse.json([
            "name": name, "method": method, "size": size, "checksum": checksum.hexDigits,
            "uploadId": upload.map { $0 as Any } ?? NSNull(),
        ])
        if upload != nil { response.headers.append(complete(true)) }
        return response
    }

    static func completed(_ upload: ResumableUpload) -> HTTPResponse {
        target(
            name: upload.name, method: upload.method, size: upload.offset, checksum: upload.checksum, upload: upload.id)
    }

    /// `201 Created` to a creation that did not complete the upload.
    static func created(_ upload: ResumableUpload) -> HTTPResponse {
        HTTPResponse(
            status: 201,
            headers: [
                HTTPHeader("Location", location(of: upload.id)), complete(false), offset(upload.offset), limit,
            ])
    }

    /// `204` to an append that did not complete the upload.
    static func appended(_ upload: ResumableUpload) -> HTTPResponse {
        HTTPResponse(status: 204, headers: [offset(upload.offset), complete(false)])
    }

    /// `204` to an offset retrieval.
    static func state(_ upload: ResumableUpload) -> HTTPResponse {
        var headers = [offset(upload.offset), complete(upload.isComplete)]
        if let length = upload.length { headers.append(HTTPHeader("Upload-Length", "\(length)")) }
        headers += [limit, HTTPHeader("Cache-Control", "no-store")]
        return HTTPResponse(status: 204, headers: headers)
    }

    static func conflict(_ upload: ResumableUpload, provided: Int64) -> HTTPResponse {
        problem(
            409, "mismatching-upload-offset", "offset from request does not match offset of resource",
            extra: ["expected-offset": upload.offset, "provided-offset": provided], headers: [offset(upload.offset)])
    }

    static let inconsistentLength = problem(400, "inconsistent-upload-length", "inconsistent length values for upload")

    static let tooLarge = problem(
        413, nil, "the upload would pass the limit of \(ResumableUpload.maxSize) bytes", headers: [limit])

    static let alreadyComplete = problem(400, nil, "the upload is complete; nothing can be appended")

    /// To an upload deactivated by an inconsistent length or an offset past it.
    static let deactivated = problem(410, nil, "the upload was deactivated and takes no more requests")

    static let unsupportedMediaType = HTTPResponse.text(
        "an append needs Content-Type: application/partial-upload\n", status: 415)

    static let missingFields = HTTPResponse.text(
        "an append needs Upload-Offset (a non-negative Integer) and Upload-Complete (?0 or ?1)\n", status: 400)

    /// An RFC 9457 problem document with `Upload-Complete: ?0`; `type` names one of the draft's
    /// problem types, or none (`about:blank`).
    private static func problem(
        _ status: Int, _ type: String?, _ title: String, extra: [String: Any] = [:], headers: [HTTPHeader] = []
    ) -> HTTPResponse {
        var document = extra
        document["title"] = title
        if let type { document["type"] = problemTypes + type }
        var response = HTTPResponse.json(document, status: status)
        response.headers = [HTTPHeader("Content-Type", "application/problem+json"), complete(false)] + headers
        return response
    }

    private static func complete(_ isComplete: Bool) -> HTTPHeader {
        HTTPHeader("Upload-Complete", isComplete ? "?1" : "?0")
    }

    private static func offset(_ offset: Int64) -> HTTPHeader {
        HTTPHeader("Upload-Offset", "\(offset)")
    }
}
