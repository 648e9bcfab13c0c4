import Foundation

/// One upload resource of `/resumable/uploads/{id}` (draft-ietf-httpbis-resumable-upload): how far
/// it got, the length it was promised, and which request may append to it. Its bytes are not
/// kept, only their count and running checksum, so a gigabyte upload costs the server nothing.
///
/// Its methods are the draft's rules; ``ResumableUploadState`` runs them under its lock.
struct ResumableUpload {
    /// The one request allowed to append (the draft forbids two at once).
    struct Appender: Equatable {
        let serial: Int
        /// Its connection's socket, reset when a newer request takes over.
        let descriptor: Int32
    }

    enum LengthCheck {
        case recorded
        /// Two indications of the length disagree, or the body would run past it.
        case inconsistent
        /// Past ``maxSize``.
        case tooLarge
    }

    /// How an append request may go on, decided before its body is read.
    enum Start {
        case started
        case deactivated
        /// `Upload-Offset` is not the upload's offset.
        case conflict
        /// The upload is complete and the request completes it again with no content: answer
        /// the final response once more (it was lost, or the client is unsure).
        case replay
        /// The upload is complete and the request would add to it.
        case alreadyComplete
        case inconsistentLength
        case tooLarge
    }

    /// What appending one piece of a body did.
    enum Step {
        /// All of it was appended; `progress` is the offset when it passed another
        /// ``progressInterval`` and the client is to be told so.
        case appended(progress: Int64?)
        /// Only what reached a `drop_at` offset was appended: the connection is to be reset.
        case dropPointReached
        /// It would pass the length or the limit: the upload is deactivated.
        case pastLength
        case pastLimit
    }

    enum Finish {
        case completed
        /// The body ended and the request did not complete the upload.
        case partial
        /// The request completed the upload short of (or past) its announced length: deactivated.
        case inconsistentLength
    }

    /// The most any upload may hold: 1 GiB, announced as `Upload-Limit: max-size=1073741824`.
    static let maxSize: Int64 = 1 << 30
    /// How often a `104` tells the client the offset while a body arrives: every 16 MiB.
    static let progressInterval: Int64 = 16 << 20

    let id: String
    /// The `{name}` of the target `/resumable/{name}` and the method that created the upload,
    /// for the final answer.
    let name: String
    let method: String
    /// Whether `104` interim responses are sent (not with `no_104=1`, nor to a client of another
    /// draft version).
    let announces: Bool
    var offset: Int64 = 0
    var length: Int64?
    var isComplete = false
    /// Set once the length contradicts itself or the offset would pass it or the limit: from then
    /// on every request is refused, as the draft requires of an upload that lost its integrity.
    var isDeactivated = false
    var isCancelled = false
    var checksum = Checksum()
    /// Every body byte read for this upload, appended or not.
    var bytesRead: Int64 = 0
    /// The `drop_at` offsets not reached yet, ascending.
    var dropPoints: [Int64]
    var offsetRetrievals = 0
    var appends = 0
    var conflicts = 0
    var appender: Appender?

    init(id: String, name: String, method: String, announces: Bool, dropPoints: [Int64]) {
        self.id = id
        self.name = name
        self.method = method
        self.announces = announces
        self.dropPoints = dropPoints
    }

    /// Records the length a creation or append request indicates (draft §"Length"):
    /// `Upload-Length`, or with `Upload-Complete: ?1` the offset plus `bodyLength`; both, and any
    /// length recorded before, must agree, and a body of known length must fit within it.
    mutating func recordLength(uploadLength: Int64?, completes: Bool, bodyLength: Int64?) -> LengthCheck {
        // Values have at most 18 digits and the offset is at most `maxSize`: no sum overflows.
        var indicated = uploadLength
        if completes, let bodyLength {
            let total = offset + bodyLength
            guard indicated == nil || indicated == total else { return .inconsistent }
            indicated = total
        }
        if let indicated {
            guard length == nil || length == indicated, indicated >= offset else { return .inconsistent }
            guard indicated <= Self.maxSize else { return .tooLarge }
            length = indicated
        }
        guard let bodyLength else { return .recorded }
        if let length, offset + bodyLength > length { return .inconsistent }
        return offset + bodyLength > Self.maxSize ? .tooLarge : .recorded
    }

    /// Checks an append request (draft §"Upload Append", server behaviour) and, when it may go
    /// on, makes it the appender.
    mutating func beginAppend(
        at requestOffset: Int64, completes: Bool, uploadLength: Int64?, bodyLength: Int64?, as appender: Appender
    ) -> Start {
        guard !isDeactivated else { return .deactivated }
        guard requestOffset == offset else {
            conflicts += 1
            return .conflict
        }
        if isComplete {
            guard completes, bodyLength == 0 else { return .alreadyComplete }
            appends += 1
            return .replay
        }
        switch recordLength(uploadLength: uploadLength, completes: completes, bodyLength: bodyLength) {
        case .inconsistent:
            isDeactivated = true
            return .inconsistentLength
        case .tooLarge:
            return .tooLarge
        case .recorded:
            appends += 1
            self.appender = appender
            return .started
        }
    }

    /// Appends `data`, or as much of it as reaches the next drop point. An empty `data` reaches
    /// a drop point at the current offset (`drop_at=0`) before any byte arrives.
    mutating func append(_ data: Data) -> Step {
        let room = (length ?? Self.maxSize) - offset
        if let point = dropPoints.first, point - offset <= Int64(data.count), point - offset <= room {
            add(data.prefix(Int(point - offset)))
            dropPoints.removeFirst()
            return .dropPointReached
        }
        guard Int64(data.count) <= room else {
            isDeactivated = true
            return length == nil ? .pastLimit : .pastLength
        }
        let before = offset / Self.progressInterval
        add(data)
        return .appended(progress: announces && offset / Self.progressInterval > before ? offset : nil)
    }

    /// Ends the appender's turn once its body has ended.
    mutating func finish(completes: Bool) -> Finish {
        appender = nil
        guard completes else { return .partial }
        guard length == nil || length == offset else {
            isDeactivated = true
            return .inconsistentLength
        }
        length = offset
        isComplete = true
        return .completed
    }

    private mutating func add(_ data: Data) {
        checksum.update(data)
        offset += Int64(data.count)
    }
}
