import Foundation

/// The stages a task gets for a body that lives in a file: a resumable download's partial file,
/// a resumable upload's record.
extension RequestPipeline {
    /// Gives a GET with a `resumableDownloadPath` its partial file, claiming the target path.
    func attachDownload(to task: RequestTask, target: String?, url: URL) throws(ErrandError) {
        guard let target else { return }
        let partial = try PartialDownload(targetPath: target, url: url)
        do {
            try scheduler.claimDownloadTarget(partial.targetURL.path, for: task)
        } catch .taken {
            throw .fileSystem("download to \(partial.targetURL.path): another download to this file is running")
        } catch {
            return  // Cancelled meanwhile: it has finished.
        }
        task.download = DownloadReceiver(partial: partial, progress: task.progress)
    }

    /// Gives a request with a `resumableUploadPath` its upload, then queues it: the record a
    /// previous start left is read off the caller's thread, which may be the main thread. Records
    /// live in the request's cache folder, so one account's upload is never resumed by another.
    func attachUpload(to task: RequestTask, _ plan: RequestPlan, _ request: TransportRequest, path: String) {
        DispatchQueue.global(qos: .userInitiated).async { [self] in
            do throws(ErrandError) {
                let folder = try CacheKey.folder(for: task.request, config: config)
                task.upload = try ResumableUpload(
                    file: URL(fileURLWithPath: path), request: request, directory: folder.url)
            } catch {
                return finish(task, response: nil, error: error)
            }
            task.built(request)
            enqueue(task, plan, request)
        }
    }
}
