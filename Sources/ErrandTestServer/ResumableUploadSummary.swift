/// Where an upload resource of `/resumable/uploads/{id}` stands, as ``TestServer/resumableUpload(named:)``
/// reports it: what the server holds and how the client got it there.
public struct ResumableUploadSummary: Sendable, Equatable {
    /// The upload's id: its resource is `/resumable/uploads/{id}`.
    public let id: String
    /// How many bytes the upload holds (`Upload-Offset`).
    public let offset: Int64
    /// The length the client announced (`Upload-Length`, or `Upload-Complete: ?1` with a
    /// `Content-Length`), or that completing fixed; `nil` while none is known.
    public let length: Int64?
    /// Whether a request completed the upload and the target's final answer was made.
    public let isComplete: Bool
    /// The FNV-1a 64 ``Checksum`` of the bytes held, in order, as 16 lower-case hex digits.
    public let checksum: String
    /// Every body byte the server read for this upload over all its requests, those it did not
    /// append included (past a `drop_at` point, or read after another request took over): what
    /// the client sent that arrived. `bytesRead - offset` is what was sent for nothing.
    public let bytesRead: Int64
    /// How many uploads were created for the same `/resumable/{name}`, this one included: more
    /// than 1 when a client started over instead of resuming.
    public let creations: Int
    /// How many `HEAD` or `GET` requests asked this upload's offset.
    public let offsetRetrievals: Int
    /// How many `PATCH` requests were accepted to append (a replay of the final answer included).
    public let appends: Int
    /// How many `PATCH` requests were refused with `409 Conflict` for a wrong `Upload-Offset`.
    public let conflicts: Int

    init(_ upload: ResumableUpload, creations: Int) {
        id = upload.id
        offset = upload.offset
        length = upload.length
        isComplete = upload.isComplete
        checksum = upload.checksum.hexDigits
        bytesRead = upload.bytesRead
        self.creations = creations
        offsetRetrievals = upload.offsetRetrievals
        appends = upload.appends
        conflicts = upload.conflicts
    }
}
