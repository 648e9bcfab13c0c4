// swift-format-ignore-file
// (These snippets are the documents' code, line for line: formatted, they would part from it.)
import Errand
import Foundation

private func play(_ file: URL) {}
private final class ProgressBar: Sendable { func show(_ progress: TransferProgress) {} }
private let bar = ProgressBar()
private let videosFolder = FileManager.default.temporaryDirectory

/// The code the article "Downloads and uploads" shows, compiled (DocumentedCodeTests checks each
/// snippet is the article's; DocumentationSnippetTests runs the multipart one).
enum TransfersSnippets {
    // snippet: Transfers.md
    struct VideoApi: BaseRequest {
        var url: String { "/videos/42.mp4" }
        var resumableDownloadPath: String? { videosFolder.path + "/" }   // a directory: the file is 42.mp4
        var resumableDownloadProgress: (@Sendable (TransferProgress) -> Void)? {
            { progress in print(progress.fractionCompleted ?? 0) }
        }
    }
    // end snippet

    static func download() async throws {
        // snippet: Transfers.md
        let response = try await VideoApi().response()
        play(response.fileURL!)
        // end snippet
        // snippet: Transfers.md
        let task = VideoApi().start()
        Task { for await progress in task.downloadProgress { bar.show(progress) } }
        let file = try await task.value.fileURL
        // end snippet
        _ = file
    }

    // snippet: Transfers.md
    struct PublishVideoApi: BaseRequest {
        let video: URL
        var url: String { "/v1/videos" }
        var method: HTTPMethod { .post }
        var headers: [String: String] { ["Content-Type": "video/mp4"] }
        var resumableUploadPath: String? { video.path }
    }
    // end snippet

    static func publish(_ recording: URL) async throws {
        // snippet: Transfers.md
        let published = try await PublishVideoApi(video: recording).response()
        // end snippet
        _ = published
    }

    // snippet: Transfers.md
    struct AvatarApi: BaseRequest {
        let photo: URL
        var url: String { "/me/avatar" }
        var method: HTTPMethod { .post }
        var arguments: [String: any Sendable]? { ["crop": "square"] }
        var constructingBody: (@Sendable (inout MultipartFormData) -> Void)? {
            { [photo] form in form.append(photo, name: "avatar") }   // streamed, never read whole
        }
    }

    // end snippet

    // snippet: Transfers.md
    struct PostPhotoApi: BaseRequest {
        let photo: URL        // beach.jpg on disk
        let thumbnail: Data   // PNG bytes in memory
        var url: String { "/photos" }
        var method: HTTPMethod { .post }
        var constructingBody: (@Sendable (inout MultipartFormData) -> Void)? {
            { [photo, thumbnail] form in
                form.append("A holiday", name: "title")                       // a text field
                form.append(photo, name: "photo")                              // filename beach.jpg, image/jpeg
                form.append(thumbnail, name: "thumb", fileName: "thumb.png")   // image/png, from the file name
                form.append(thumbnail, name: "preview", fileName: "preview", mimeType: "image/png")
            }
        }
    }

    // end snippet

    // snippet: Transfers.md
    struct UploadExportApi: BaseRequest {
        let rows: AsyncStream<Data>
        var url: String { "/exports" }
        var method: HTTPMethod { .post }
        var headers: [String: String] { ["Content-Type": "text/csv"] }
        var uploadBody: UploadBody? { .stream(rows, length: nil) }
    }
    // end snippet

    static func streamedUpload() async throws {
        // snippet: Transfers.md
        let (rows, continuation) = AsyncStream.makeStream(of: Data.self)
        let task = UploadExportApi(rows: rows).start()
        for line in ["id,total\n", "1,9.50\n", "2,12.00\n"] {
            continuation.yield(Data(line.utf8))   // sent as it comes
        }
        continuation.finish()                     // the body ends here
        let response = try await task.value
        // end snippet
        _ = response
    }

    // snippet: Transfers.md
    /// Rows of an export, a page at a time, as the upload asks for them.
    actor ExportPages {
        private var next = 0
        let count: Int

        init(count: Int) { self.count = count }

        func nextPage() -> Data? {   // nil after the last page: the body ends
            guard next < count else { return nil }
            defer { next += 1 }
            return Data((0..<1000).map { "\(next),\($0)\n" }.joined().utf8)
        }
    }
    // end snippet

    static func pagedUpload() {
        // snippet: Transfers.md
        let pages = ExportPages(count: 10_000)
        let body = UploadBody.stream(AsyncStream { await pages.nextPage() }, length: nil)
        // end snippet
        _ = body
    }

    // snippet: Transfers.md
    /// Counts an export's bytes as the upload takes them.
    actor ExportTally {
        private(set) var bytes = 0
        func add(_ page: Data) { bytes += page.count }
    }
    // end snippet

    static func uploadWithTrailers() async throws {
        // snippet: Transfers.md
        let pages = ExportPages(count: 10_000)
        let tally = ExportTally()
        let body = UploadBody.stream(
            AsyncStream {
                guard let page = await pages.nextPage() else { return nil }
                await tally.add(page)
                return page
            }, length: nil
        ) {
            ["X-Export-Bytes": String(await tally.bytes)]   // asked once the last page went
        }
        // end snippet
        _ = body
        let (rows, _) = AsyncStream.makeStream(of: Data.self)
        // snippet: Transfers.md
        let response = try await UploadExportApi(rows: rows).response()
        let checksum = response.value(forTrailer: "X-Checksum")   // nil when the server sent none
        // end snippet
        _ = checksum
    }
}
