/// A request in flight in a ``CurlTransport``.
final class CurlTask: TransportTask {
    private let id: Int
    private let mailbox: CurlEventMailbox
    private let driver: CurlDriver?

    init(id: Int, mailbox: CurlEventMailbox, driver: CurlDriver?) {
        self.id = id
        self.mailbox = mailbox
        self.driver = driver
    }

    /// Completes the request as cancelled at once, from any thread, and has the curl thread let go of it.
    func cancel() {
        guard mailbox.close(with: .cancelled) else { return }
        driver?.submit(.cancel(id: id))
    }

    /// Pauses the transfer at its next body chunk, from any thread: libcurl's write callback
    /// declines it, and libcurl hands it back once resumed.
    func pauseReceiving() {
        mailbox.hold(true)
    }

    /// Resumes a transfer ``pauseReceiving()`` paused, from any thread.
    func resumeReceiving() {
        mailbox.hold(false)
    }
}
