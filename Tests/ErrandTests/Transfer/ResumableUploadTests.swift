import Foundation
import Testing

@testable import Errand

/// The exchanges of a resumable upload, one attempt's events at a time: what each attempt sends,
/// and whether it resumes or ends — whatever a server answers.
@Suite("Resumable upload: its exchanges")
final class ResumableUploadTests {
    private let directory = FileManager.default.temporaryDirectory.appendingPathComponent("errand-upload-\(UUID())")
    private let file: URL
    private let size = 1000
    private let request: TransportRequest

    init() throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        file = directory.appendingPathComponent("video.bin")
        try Data(repeating: 7, count: size).write(to: file)
        request = TransportRequest(
            url: try #require(URL(string: "https://api.example.com/v1/videos?x=1")), method: "POST",
            headers: ["Content-Type": "video/mp4", "Content-Length": "1000", "Authorization": "Bearer t"],
            bodyFileURL: file)
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }

    private func makeUpload() throws -> ResumableUpload {
        try ResumableUpload(file: file, request: request, directory: directory.appendingPathComponent("cache"))
    }

    private var records: [URL] {
        let folder = directory.appendingPathComponent("cache/ResumableUploads")
        return (try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)) ?? []
    }

    private static let dropped = ErrandError.transport(URLError(.networkConnectionLost))

    /// Sends the creation, takes its `104` (from `location`), then `ending`.
    private func created(
        _ upload: ResumableUpload, location: String = "/uploads/abc", ending: ErrandError? = dropped
    ) -> EventDisposition {
        _ = upload.prepare(request)
        _ = upload.receive(.interimHead(statusCode: 104, headers: ["Location": location]))
        return upload.receive(.completed(ending))
    }

    /// One attempt answered with a head `status`, `headers`, then completed.
    private func answer(_ upload: ResumableUpload, _ status: Int, _ headers: [String: String] = [:]) -> EventDisposition
    {
        _ = upload.receive(.responseHead(statusCode: status, headers: headers))
        return upload.receive(.completed(nil))
    }

    private func isRestart(_ disposition: EventDisposition) -> Bool {
        if case .restart = disposition { return true }
        return false
    }

    private func failure(_ disposition: EventDisposition) -> ErrandError?? {
        switch disposition {
        case .record(.completed(let error)): .some(error)
        case .fail(let error): .some(error)
        default: nil
        }
    }

    @Test func theCreationOffersToResumeTheWholeFile() throws {
        let sent = try makeUpload().prepare(request)
        #expect(
            sent.method == "POST" && sent.url == request.url && sent.bodyFileURL == file && sent.bodyFileOffset == 0)
        #expect(sent.headers["Upload-Complete"] == "?1")
        #expect(sent.headers["Upload-Length"] == "1000")
        #expect(sent.headers["Upload-Draft-Interop-Version"] == "8")
        #expect(sent.headers["Content-Type"] == "video/mp4")
    }

    @Test func aDropAfterTheOfferAsksTheOffsetThenSendsOnlyTheRest() throws {
        let upload = try makeUpload()
        #expect(isRestart(created(upload)))
        #expect(records.count == 1, "the offer is kept for a restart")
        let head = upload.prepare(request)
        #expect(head.method == "HEAD" && head.url.absoluteString == "https://api.example.com/uploads/abc")
        #expect(head.body == nil && head.bodyFileURL == nil)
        #expect(head.headers.headerField("Content-Length") == nil && head.headers.headerField("Upload-Complete") == nil)
        #expect(head.headers["Authorization"] == "Bearer t", "the same origin's credentials")
        #expect(isRestart(answer(upload, 204, ["Upload-Offset": "400", "Upload-Complete": "?0"])))
        let patch = upload.prepare(request)
        #expect(patch.method == "PATCH" && patch.url == head.url)
        #expect(patch.bodyFileURL == file && patch.bodyFileOffset == 400)
        #expect(patch.headers["Content-Type"] == "application/partial-upload")
        #expect(patch.headers["Content-Length"] == "600")
        #expect(patch.headers["Upload-Offset"] == "400" && patch.headers["Upload-Complete"] == "?1")
        #expect(patch.headers.headerField("Upload-Length") == nil)
        #expect(failure(answer(upload, 200, ["Upload-Complete": "?1"])) == .some(nil))
        let (_, error) = upload.conclude(Response(statusCode: 200), error: nil)
        #expect(error == nil)
        #expect(records.isEmpty, "an upload that is over lets its record go")
    }

    @Test(arguments: [
        "https://evil.example.net/uploads/abc", "http://api.example.com/uploads/abc", "https://api.example.com:8443/u",
    ])
    func anOfferOnAnotherOriginIsNotTaken(_ location: String) throws {
        let upload = try makeUpload()
        #expect(failure(created(upload, location: location)) == .some(Self.dropped))
        #expect(records.isEmpty)
    }

    @Test(arguments: ["1001", "-1", "abc", "1e3", "1234567890123456", "", " 12 x"])
    func anOffsetTheFileCannotResumeFromFailsAndForgetsTheUpload(_ offset: String) throws {
        let upload = try makeUpload()
        _ = created(upload)
        _ = upload.prepare(request)
        guard case .fail(.transport(let failure)) = answer(upload, 204, ["Upload-Offset": offset]) else {
            Issue.record("resumed from \(offset)")
            return
        }
        #expect(failure.code == .badServerResponse)
        #expect(records.isEmpty)
    }

    @Test func aConflictResumesFromTheServersOffset() throws {
        let upload = try makeUpload()
        _ = created(upload)
        _ = upload.prepare(request)
        _ = answer(upload, 204, ["Upload-Offset": "400"])
        _ = upload.prepare(request)
        #expect(isRestart(answer(upload, 409, ["Upload-Offset": "450", "Upload-Complete": "?0"])))
        #expect(upload.prepare(request).bodyFileOffset == 450)
    }

    @Test(arguments: [404, 410])
    func anUploadTheServerLetGoStartsOverWhole(_ status: Int) throws {
        let upload = try makeUpload()
        _ = created(upload)
        _ = upload.prepare(request)
        #expect(isRestart(answer(upload, status)))
        #expect(records.isEmpty)
        let again = upload.prepare(request)
        #expect(again.method == "POST" && again.url == request.url && again.bodyFileOffset == 0)
    }

    @Test(arguments: [(403, false), (400, false), (401, true), (429, true)])
    func aRefusalToSayTheOffsetStartsOverUnlessItMayPass(_ status: Int, keeps: Bool) throws {
        let upload = try makeUpload()
        _ = created(upload)
        _ = upload.prepare(request)
        let answered = answer(upload, status)
        #expect(isRestart(answered) == !keeps)
        #expect(records.count == (keeps ? 1 : 0))
        #expect(upload.prepare(request).method == (keeps ? "HEAD" : "POST"))
    }

    @Test func resumptionsThatFindNoProgressEndAfterThree() throws {
        let upload = try makeUpload()
        #expect(isRestart(created(upload)))
        // The first offset is progress; three drops after it resume, the fourth stands.
        for round in 1...4 {
            _ = upload.prepare(request)
            #expect(isRestart(answer(upload, 204, ["Upload-Offset": "400"])))
            _ = upload.prepare(request)
            let ended = upload.receive(.completed(Self.dropped))
            if round < 4 {
                #expect(isRestart(ended), "round \(round)")
            } else {
                #expect(failure(ended) == .some(Self.dropped), "the fourth drop without progress stands")
            }
        }
        #expect(records.count == 1, "kept for a later start")
    }

    @Test func aServerErrorResumesAndACancelKeepsTheUpload() throws {
        let upload = try makeUpload()
        _ = created(upload, ending: nil)
        #expect(records.count == 1)
        _ = upload.prepare(request)
        #expect(isRestart(answer(upload, 204, ["Upload-Offset": "100"])))
        _ = upload.prepare(request)
        #expect(isRestart(answer(upload, 503)))
        _ = upload.prepare(request)
        #expect(failure(upload.receive(.completed(.cancelled))) == .some(.cancelled))
        _ = upload.conclude(nil, error: .cancelled)
        #expect(records.count == 1, "a cancelled upload resumes at its next start")
        let next = try makeUpload()
        #expect(next.prepare(request).method == "HEAD")
    }

    @Test func aRecordOfTheFileBeforeItChangedIsNotResumed() throws {
        _ = created(try makeUpload())
        try Data(repeating: 8, count: size + 1).write(to: file)
        let next = try makeUpload()
        #expect(next.prepare(request).method == "POST")
        #expect(records.isEmpty)
    }

    @Test func aFileThatChangesWhileItIsUploadedFailsTheUpload() throws {
        let upload = try makeUpload()
        _ = upload.prepare(request)
        try Data(repeating: 9, count: size + 5).write(to: file)
        #expect(failure(answer(upload, 200)) == .some(nil))
        guard case (_, .fileSystem(let reason)?) = upload.conclude(Response(statusCode: 200), error: nil) else {
            Issue.record("a changed file was taken as uploaded")
            return
        }
        #expect(reason.contains("changed while it was uploaded"))
    }

    @Test func progressCountsWhatTheServerHeldAndNeverGoesBack() throws {
        let upload = try makeUpload()
        _ = upload.prepare(request)
        func reported(_ sent: Int64) -> Int64? {
            guard
                case .record(.uploadProgress(let bytes, let total)) = upload.receive(
                    .uploadProgress(bytesSent: sent, totalBytes: nil))
            else { return nil }
            #expect(total == 1000)
            return bytes
        }
        #expect(reported(600) == 600)
        _ = upload.receive(.interimHead(statusCode: 104, headers: ["Location": "/u/1"]))
        _ = upload.receive(.completed(Self.dropped))
        _ = upload.prepare(request)
        _ = answer(upload, 204, ["Upload-Offset": "400"])
        _ = upload.prepare(request)
        #expect(reported(100) == 600, "the 200 bytes lost in the drop are not counted twice")
        #expect(reported(600) == 1000)
    }
}
