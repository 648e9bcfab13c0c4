import Foundation

/// ``ReplayMiss/record(via:into:)``: sends a request the recording lacks through the real
/// transport and adds what came back to the recording — in memory, so the next such request
/// replays it, and in the file, appended (``ReplayRecordingFile``) before the request completes.
final class ReplayRecording: Sendable {
    /// What one request received, kept until it completes.
    private struct Received {
        var statusCode: Int?
        var headers: [String: String] = [:]
        /// The body's first bytes, up to the maximum.
        var body = Data()
        /// The body's whole size, for the entry to say where it was cut.
        var bodySize = 0
        var trailers: [String: String] = [:]
        var metrics: TransportMetrics?
    }

    private let transport: any Transport
    private let file: URL
    private let index: ReplayIndex
    private let archive: Locked<HTTPArchive>
    private let builder: HAREntryBuilder
    private let maximumBodySize: Int
    /// Writes the file one request at a time, off the transport's thread, in the order the
    /// exchanges were added: the file never goes back to an older state.
    private let writer = DispatchQueue(label: "Errand.ReplayRecording", qos: .utility)
    /// The file as the writer left it; taken and put back by the writer alone, never written under the lock.
    private let recordingFile: Locked<ReplayRecordingFile>

    /// Bytes of each body recorded: a replay needs the whole body, within reason. A longer body
    /// is cut there, its entry's comment saying so, and its replay fails (see ``ReplayEntry``).
    static let maximumBodySize = 64 << 20

    /// Records through `transport` into `file`, which holds `archive` now, adding to `index`.
    init(
        via transport: any Transport, into file: URL, archive: HTTPArchive, index: ReplayIndex,
        maximumBodySize: Int = ReplayRecording.maximumBodySize
    ) {
        self.maximumBodySize = maximumBodySize
        builder = HAREntryBuilder(redaction: .default, maximumBodySize: maximumBodySize)
        self.transport = transport
        self.file = file
        self.index = index
        self.archive = Locked(archive)
        recordingFile = Locked(ReplayRecordingFile(url: file))
    }

    /// Sends `request` through the real transport, passing its events on; the completion waits
    /// until the exchange is in the file, and reports ``ErrandError/fileSystem(_:)`` if it could
    /// not be written.
    func send(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void) -> any TransportTask {
        let sent = HAREntryBuilder.Exchange(
            request: request, body: builder.sentBody(of: request), startedAt: Date(), sentAt: .now, finishedAt: .now,
            attemptCount: 1)
        let received = Locked(Received())
        return transport.send(request) { [self] event in
            switch event {
            case .responseHead(let statusCode, let headers):
                received.withLock {
                    $0.statusCode = statusCode
                    $0.headers = headers
                }
            case .body(let chunk):
                received.withLock {
                    $0.bodySize += chunk.count
                    if $0.body.count < maximumBodySize { $0.body += chunk.prefix(maximumBodySize - $0.body.count) }
                }
            case .trailers(let trailers):
                received.withLock { $0.trailers = trailers }
            case .metrics(let metrics):
                received.withLock { $0.metrics = metrics }
            case .interimHead, .uploadProgress:
                break
            case .completed(let error):
                let received = received.withLock { $0 }
                guard error == nil, let statusCode = received.statusCode else { return events(event) }
                var exchange = sent
                exchange.response = Response(
                    statusCode: statusCode, headers: received.headers, data: received.body, trailers: received.trailers)
                exchange.responseBodySize = received.bodySize
                exchange.metrics = received.metrics
                exchange.finishedAt = .now
                let entry = builder.entry(exchange)
                return writer.async { [self] in events(.completed(add(entry))) }
            }
            events(event)
        }
    }

    /// On the writer: adds `entry` to the index and the file; the error when the file cannot be written.
    private func add(_ entry: HTTPArchive.Entry) -> ErrandError? {
        let position = archive.withLock { archive in
            archive.log.entries.append(entry)
            return archive.log.entries.count - 1
        }
        // Errand's own entry always reads back; were it not to, the file still has it.
        if let replayable = try? ReplayEntry(entry, at: position, in: file.path) {
            index.append(replayable)
        }
        var recordingFile = self.recordingFile[\.self]
        defer { self.recordingFile[\.self] = recordingFile }
        do throws(ErrandError) {
            // The whole archive is copied only when the file must be written whole.
            try recordingFile.append(entry) { archive[\.self] }
            return nil
        } catch {
            return error
        }
    }
}
