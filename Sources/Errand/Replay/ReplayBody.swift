import Foundation

/// A recorded request body, as ``ReplayMatching/methodURLAndBody`` compares a request's with it.
enum ReplayBody: Sendable {
    /// The request had no body.
    case none
    /// A body went out but was not recorded: any body matches.
    case unrecorded
    /// The bytes recorded of a body of `mimeType`; `isTruncated` when only its start was kept.
    case recorded(Data, mimeType: String, isTruncated: Bool)

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
        let isTruncated = postData.comment?.contains(HAREntryBuilder.truncationNote) ?? false
        self = .recorded(
            try ReplayEntry.decoded(text, encoding: postData.encoding, field: "request.postData"),
            mimeType: postData.mimeType.lowercased(), isTruncated: isTruncated)
    }

    /// Whether a request's body matches: `actual` is `nil` when it cannot be read without being
    /// used up (a ``BodyStream``), and empty when the request has none.
    func matches(_ actual: Data?) -> Bool {
        guard let actual else { return true }
        switch self {
        case .none:
            return actual.isEmpty
        case .unrecorded:
            return true
        case .recorded(let recorded, _, isTruncated: true):
            return ReplayWildcard.text(Self.bytes(recorded) + ReplayWildcard.placeholder, matches: Self.bytes(actual))
        case .recorded(let recorded, let mimeType, isTruncated: false):
            if mimeType.contains("x-www-form-urlencoded") {
                return ReplayWildcard.fields(Self.formFields(recorded), match: Self.formFields(actual))
            }
            if let recordedJSON = try? JSONSerialization.jsonObject(with: recorded, options: .fragmentsAllowed),
                let actualJSON = try? JSONSerialization.jsonObject(with: actual, options: .fragmentsAllowed)
            {
                return ReplayWildcard.json(recordedJSON, matches: actualJSON)
            }
            return ReplayWildcard.text(Self.bytes(recorded), matches: Self.bytes(actual))
        }
    }

    /// Bytes as text, one character per byte: any bytes compare, and a placeholder in them still reads.
    private static func bytes(_ data: Data) -> String {
        String(data: data, encoding: .isoLatin1) ?? ""
    }

    private static func formFields(_ data: Data) -> [(name: String, value: String)] {
        Redaction().formPairs(String(decoding: data, as: UTF8.self), names: [])
    }
}
