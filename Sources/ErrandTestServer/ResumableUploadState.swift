import Foundation

/// The upload resources of ``ResumableUploadRoutes``, one store per server, and the draft's
/// concurrency rule: a request that retrieves the offset, appends or cancels first ends the
/// request still appending to the same upload, by resetting its connection, so that two appends
/// never overlap and an offset once answered is the one the next append must give.
///
/// An appender's socket is shut down only under the lock and only while it is registered here;
/// its handler unregisters it (``release(_:as:)``) before it returns, and its connection closes
/// the socket only after that, so the descriptor shut down is never one the kernel reused.
final class ResumableUploadState: @unchecked Sendable {  // every `var` is read and written only while holding `lock`
    /// Enough for any test or benchmark; the oldest upload is forgotten beyond it.
    static let maxUploads = 1000

    private let lock = NSLock()
    private var uploads: [String: ResumableUpload] = [:]
    /// Upload ids, oldest first.
    private var order: [String] = []
    /// The newest upload created for each target name, and how many were.
    private var newest: [String: (id: String, creations: Int)] = [:]
    private var serial = 0

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    /// Adds `upload`, with the creation request on `descriptor` as its appender.
    func create(_ upload: ResumableUpload, descriptor: Int32) -> ResumableUpload.Appender {
        locked {
            var upload = upload
            let appender = nextAppender(descriptor: descriptor)
            upload.appender = appender
            uploads[upload.id] = upload
            order.append(upload.id)
            newest[upload.name] = (upload.id, (newest[upload.name]?.creations ?? 0) + 1)
            if order.count > Self.maxUploads { forget(order.removeFirst()) }
            return appender
        }
    }

    /// A new appender for a request on `descriptor`, registered by ``takeOver(_:_:)``'s body.
    func makeAppender(descriptor: Int32) -> ResumableUpload.Appender {
        locked { nextAppender(descriptor: descriptor) }
    }

    /// Whether `id` names an upload that was not cancelled.
    func contains(_ id: String) -> Bool {
        locked { uploads[id].map { !$0.isCancelled } ?? false }
    }

    /// Ends the request appending to `id`, if any, then runs `body` on the upload; `nil` when
    /// there is no such upload or it was cancelled.
    func takeOver<T>(_ id: String, _ body: (inout ResumableUpload) -> T) -> T? {
        locked {
            guard uploads[id]?.isCancelled == false else { return nil }
            endAppender(of: id)
            guard var upload = uploads[id] else { return nil }
            let result = body(&upload)
            uploads[id] = upload
            return result
        }
    }

    /// Counts `data` as read for `id` and appends it as `appender`; `nil` once another request
    /// took over or the upload is gone, and then nothing is appended.
    func read(_ data: Data, into id: String, as appender: ResumableUpload.Appender) -> ResumableUpload.Step? {
        locked {
            guard uploads[id] != nil else { return nil }
            uploads[id]?.bytesRead += Int64(data.count)
            guard uploads[id]?.appender == appender else { return nil }
            return uploads[id]?.append(data)
        }
    }

    /// Ends `appender`'s turn once its body has ended, with the upload as it then is; `nil` when
    /// another request took over.
    func finish(
        _ id: String, as appender: ResumableUpload.Appender, completes: Bool
    ) -> (ResumableUpload.Finish, ResumableUpload)? {
        locked {
            guard uploads[id]?.appender == appender, var upload = uploads[id] else { return nil }
            let finish = upload.finish(completes: completes)
            uploads[id] = upload
            return (finish, upload)
        }
    }

    /// Unregisters `appender` if it still is the one: called on every way out of its handler.
    func release(_ id: String, as appender: ResumableUpload.Appender) {
        locked {
            if uploads[id]?.appender == appender { uploads[id]?.appender = nil }
        }
    }

    /// Cancels `id` (`DELETE`), ending the request appending to it; `false` when there is no
    /// such upload or it was cancelled already.
    func cancel(_ id: String) -> Bool {
        locked {
            guard uploads[id]?.isCancelled == false else { return false }
            endAppender(of: id)
            uploads[id]?.isCancelled = true
            return true
        }
    }

    /// The newest upload created for the target `name`.
    func summary(named name: String) -> ResumableUploadSummary? {
        locked {
            guard let (id, creations) = newest[name], let upload = uploads[id] else { return nil }
            return ResumableUploadSummary(upload, creations: creations)
        }
    }

    // MARK: Under the lock

    private func nextAppender(descriptor: Int32) -> ResumableUpload.Appender {
        serial += 1
        return ResumableUpload.Appender(serial: serial, descriptor: descriptor)
    }

    private func endAppender(of id: String) {
        guard let appender = uploads[id]?.appender else { return }
        // Registered, so still open: its handler has not returned (see the type's comment).
        Socket.abort(appender.descriptor)
        uploads[id]?.appender = nil
    }

    private func forget(_ id: String) {
        guard let upload = uploads.removeValue(forKey: id) else { return }
        if newest[upload.name]?.id == id { newest[upload.name] = nil }
    }
}
