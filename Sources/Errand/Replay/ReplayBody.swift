import Foundation

/// A recorded request body, as ``ReplayMatching/methodURLAndBody`` compares a request's with it.
enum ReplayBody: Sendable {
    /// The request had no body.
    case none
    /// A body went out but was not recorded: any body matches.
    case unrecorded
    /// A recorded body, in the form it is compared in.
    case recorded(Recorded)

    /// A recorded body as it is compared, worked out once when the recording is read.
    enum Recorded: Sendable {
        /// The start of a truncated body, as ``ReplayBody/bytes(_:)`` text with the placeholder
        /// after it: a body that starts with it matches.
        case start(String)
        /// A form-encoded body's fields, decoded.
        case form([(name: String, value: String)])
        /// A JSON body, parsed, and its bytes, compared when the request's body is not JSON.
        case json(ReplayJSON, bytes: Data)
        /// Any other body, as ``ReplayBody/bytes(_:)`` text.
        case bytes(String)
    }

    /// The body `postData` records.
    ///
    /// - Throws: A sentence saying what is wrong, for the entry's error.
    init(_ postData: HTTPArchive.PostData?) throws(ReplayEntry.Problem) {
        guard let postData else {
            self = .none
            return
        }
        guard let text = postData.text else {
            self = .unrecorded
            return
        }
        let data = try ReplayEntry.decoded(text, encoding: postData.encoding, field: "request.postData")
        if postData.comment?.contains(HAREntryBuilder.truncationNote) ?? false {
            self = .recorded(.start(Self.bytes(data) + ReplayWildcard.placeholder))
        } else if postData.mimeType.lowercased().contains("x-www-form-urlencoded") {
            self = .recorded(.form(Self.formFields(data)))
        } else if let json = ReplayJSON(parsing: data) {
            self = .recorded(.json(json, bytes: data))
        } else {
            self = .recorded(.bytes(Self.bytes(data)))
        }
    }

    /// Whether a request's body matches: `actual` is `nil` when it cannot be read without being
    /// used up (a ``BodyStream``), and empty when the request has none.
    func matches(_ actual: ReplayRequestBody?) -> Bool {
        guard let actual else { return true }
        switch self {
        case .none:
            return actual.data.isEmpty
        case .unrecorded:
            return true
        case .recorded(.start(let start)):
            return ReplayWildcard.text(start, matches: actual.bytes)
        case .recorded(.form(let fields)):
            return ReplayWildcard.fields(fields, match: actual.formFields)
        case .recorded(.json(let json, let bytes)):
            guard let actualJSON = actual.json else {
                return ReplayWildcard.text(Self.bytes(bytes), matches: actual.bytes)
            }
            return ReplayWildcard.json(json, matches: actualJSON)
        case .recorded(.bytes(let bytes)):
            return ReplayWildcard.text(bytes, matches: actual.bytes)
        }
    }

    /// Bytes as text, one character per byte: any bytes compare, and a placeholder in them still reads.
    static func bytes(_ data: Data) -> String {
        String(data: data, encoding: .isoLatin1) ?? ""
    }

    static func formFields(_ data: Data) -> [(name: String, value: String)] {
        Redaction().formPairs(String(decoding: data, as: UTF8.self), names: [])
    }
}

/// A request's body in each form a recorded body may be compared with, each worked out at most
/// once per request, however many entries it is compared with. Used by one lookup only.
final class ReplayRequestBody {
    let data: Data
    private(set) lazy var bytes = ReplayBody.bytes(data)
    private(set) lazy var formFields = ReplayBody.formFields(data)
    /// `nil` when the body is not JSON.
    private(set) lazy var json = ReplayJSON(parsing: data)

    init(_ data: Data) {
        self.data = data
    }
}
