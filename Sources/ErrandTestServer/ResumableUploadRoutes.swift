import Foundation

/// The server side of draft-ietf-httpbis-resumable-upload (interop version 8): the target
/// `/resumable/{name}`, which offers to make an upload resumable, and the upload resources
/// `/resumable/uploads/{id}` that an interrupted upload resumes through. ``TestServer``'s
/// documentation lists the wire behaviour.
enum ResumableUploadRoutes {
    static let all: [Route] = [
        Route(["POST", "PUT"], "/resumable/{name}", streamsBody: true, handler: create),
        Route(["PATCH"], "/resumable/uploads/{id}", streamsBody: true, handler: append),
        Route(["GET", "DELETE"], "/resumable/uploads/{id}", handler: resource),
    ]

    /// How reading a body into an upload ended.
    private enum Transfer {
        case finished(ResumableUpload.Finish, ResumableUpload)
        /// Reset at a drop point, taken over by a newer request, or the client went: no answer.
        case cutOff
        /// Answered already, and reading stopped.
        case refused
    }

    // MARK: Upload creation

    /// With a valid `Upload-Complete`, creates an upload resource, announces it in a `104`
    /// before reading the body, and appends the body as it arrives; without, an upload like
    /// any other.
    private static func create(_ context: RouteContext) -> HTTPResponse {
        guard let body = context.body, let connection = context.connection, let name = context.parameters["name"]
        else { return HTTPResponse(status: 500) }
        guard let faults = ResumableUploadFaults(context.request.queryItems) else {
            return .text(ResumableUploadFaults.usage, status: 400)
        }
        let fields = ResumableUploadFields(context.request.headers)
        let method = context.request.method
        guard let completes = fields.complete else { return ordinaryUpload(body, name: name, method: method) }

        // No 1xx to an HTTP/1.0 client (RFC 9110 §15.2), nor a `104` to a client of another draft
        // version (the draft's "Draft Version Identification").
        let otherVersion = fields.interopVersion.map { $0 != ResumableUploadAnswer.interopVersion } ?? false
        let announces = !faults.withholdsInterimResponses && !otherVersion && context.request.version != "HTTP/1.0"
        var upload = ResumableUpload(
            id: newID(), name: name, method: method, announces: announces, dropPoints: faults.dropPoints)
        switch upload.recordLength(uploadLength: fields.length, completes: completes, bodyLength: fields.bodyLength) {
        case .inconsistent: return ResumableUploadAnswer.inconsistentLength
        case .tooLarge: return ResumableUploadAnswer.tooLarge
        case .recorded: break
        }
        let uploads = context.server.resumableUploads
        let appender = uploads.create(upload, descriptor: body.descriptor)
        defer { uploads.release(upload.id, as: appender) }
        if upload.announces && !connection.write(ResumableUploadAnswer.announcement(of: upload.id)) {
            return .dropConnection
        }
        switch transfer(body, on: connection, into: upload.id, as: appender, completes: completes, uploads: uploads) {
        case .finished(.completed, let upload): return ResumableUploadAnswer.completed(upload)
        case .finished(.partial, let upload): return ResumableUploadAnswer.created(upload)
        case .finished(.inconsistentLength, _): return ResumableUploadAnswer.inconsistentLength
        case .cutOff, .refused: return .dropConnection
        }
    }

    /// The target's answer to an upload that did not ask to be resumable.
    private static func ordinaryUpload(_ body: RequestBodyReader, name: String, method: String) -> HTTPResponse {
        var checksum = Checksum()
        var size: Int64 = 0
        while let piece = body.next() {
            checksum.update(piece)
            size += Int64(piece.count)
        }
        return ResumableUploadAnswer.target(name: name, method: method, size: size, checksum: checksum, upload: nil)
    }

    /// 128 random bits as 32 hex digits: an upload's URL cannot be guessed.
    private static func newID() -> String {
        (0..<2).map { _ in
            let digits = String(UInt64.random(in: .min ... .max), radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }.joined()
    }

    // MARK: Upload append

    private static func append(_ context: RouteContext) -> HTTPResponse {
        guard let body = context.body, let connection = context.connection, let id = context.parameters["id"] else {
            return HTTPResponse(status: 500)
        }
        let uploads = context.server.resumableUploads
        // A request that is not a valid append is refused without disturbing one in progress.
        guard uploads.contains(id) else { return .notFound }
        let fields = ResumableUploadFields(context.request.headers)
        guard fields.isPartialUpload else { return ResumableUploadAnswer.unsupportedMediaType }
        guard let offset = fields.offset, let completes = fields.complete else {
            return ResumableUploadAnswer.missingFields
        }
        let appender = uploads.makeAppender(descriptor: body.descriptor)
        let decision = uploads.takeOver(id) { upload in
            let start = upload.beginAppend(
                at: offset, completes: completes, uploadLength: fields.length, bodyLength: fields.bodyLength,
                as: appender)
            return (start, upload)
        }
        guard let (start, upload) = decision else { return .notFound }
        switch start {
        case .deactivated: return ResumableUploadAnswer.deactivated
        case .conflict: return ResumableUploadAnswer.conflict(upload, provided: offset)
        case .replay: return ResumableUploadAnswer.completed(upload)
        case .alreadyComplete: return ResumableUploadAnswer.alreadyComplete
        case .inconsistentLength: return ResumableUploadAnswer.inconsistentLength
        case .tooLarge: return ResumableUploadAnswer.tooLarge
        case .started: break
        }
        defer { uploads.release(id, as: appender) }
        switch transfer(body, on: connection, into: id, as: appender, completes: completes, uploads: uploads) {
        case .finished(.completed, let upload): return ResumableUploadAnswer.completed(upload)
        case .finished(.partial, let upload): return ResumableUploadAnswer.appended(upload)
        case .finished(.inconsistentLength, _): return ResumableUploadAnswer.inconsistentLength
        case .cutOff, .refused: return .dropConnection
        }
    }

    // MARK: Offset retrieval and cancellation

    private static func resource(_ context: RouteContext) -> HTTPResponse {
        guard let id = context.parameters["id"] else { return HTTPResponse(status: 500) }
        let uploads = context.server.resumableUploads
        if context.request.method == "DELETE" {
            return uploads.cancel(id) ? HTTPResponse(status: 204) : .notFound
        }
        let found = uploads.takeOver(id) { upload in
            if !upload.isDeactivated { upload.offsetRetrievals += 1 }
            return upload
        }
        guard let upload = found else { return .notFound }
        return upload.isDeactivated ? ResumableUploadAnswer.deactivated : ResumableUploadAnswer.state(upload)
    }

    // MARK: Reading a body

    /// Appends the body to upload `id` piece by piece as it arrives, so that however the request
    /// ends, the upload holds every byte read before (draft: "append as much … as possible").
    private static func transfer(
        _ body: RequestBodyReader, on connection: RawConnection, into id: String, as appender: ResumableUpload.Appender,
        completes: Bool, uploads: ResumableUploadState
    ) -> Transfer {
        let descriptor = connection.descriptor
        // An empty piece first: a drop point at the offset the request starts from is reached now.
        var piece: Data? = Data()
        while let data = piece {
            switch uploads.read(data, into: id, as: appender) {
            case nil:
                // Taken over, which reset the connection already, or forgotten.
                Socket.abort(descriptor)
                return .cutOff
            case .dropPointReached:
                Socket.abort(descriptor)
                return .cutOff
            case .pastLength:
                return refuse(ResumableUploadAnswer.inconsistentLength, on: descriptor)
            case .pastLimit:
                return refuse(ResumableUploadAnswer.tooLarge, on: descriptor)
            case .appended(let progress):
                if let progress, !connection.write(ResumableUploadAnswer.progress(progress)) {
                    return .cutOff
                }
            }
            piece = body.next()
        }
        guard case .complete = body.outcome,
            let (finish, upload) = uploads.finish(id, as: appender, completes: completes)
        else { return .cutOff }
        return .finished(finish, upload)
    }

    /// Writes `response` now and stops reading: the rest of a body that runs past the length or
    /// the limit is not read, for it may never end. The client gets up to a second to read the
    /// answer before the connection closes.
    private static func refuse(_ response: HTTPResponse, on descriptor: Int32) -> Transfer {
        var wire = response.head(keepAlive: false)
        if case .data(let data) = response.body { wire.append(data) }
        if Socket.sendAll(descriptor, wire) { Socket.finishWriting(descriptor) }
        Socket.stopReading(descriptor)
        return .refused
    }
}
