import Foundation

/// A request in flight in a ``CurlTransport``.
final class CurlTask: TransportTask {
    let id: Int
    let mailbox: CurlEventMailbox
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

    /// Sends `bytes`, then ends the connection as ``close(within:endingWith:)`` does; both reach
    /// the curl thread together, so nothing the peer does in between can complete it first.
    func writeLast(_ bytes: Data, within seconds: TimeInterval, endingWith error: ErrandError?) {
        guard let driver, !mailbox.isClosed else { return }
        driver.submit([.write(id: id, bytes, completion: { _ in }), .drop(id: id, error, within: seconds)])
    }

    /// Ends a connection opened by ``CurlTransport/openSocket(_:events:)`` once what was written
    /// before went out and the peer closed it, or after `seconds`, completing it with `error`
    /// (`nil`: normally), from any thread.
    func close(within seconds: TimeInterval, endingWith error: ErrandError?) {
        guard let driver, !mailbox.isClosed else { return }
        driver.submit(.drop(id: id, error, within: seconds))
    }

    /// Sends `bytes` on a connection opened by ``CurlTransport/openSocket(_:head:events:)``;
    /// `completion` runs, on the curl thread or inside this call, once libcurl took them all, or
    /// with why it could not.
    func write(_ bytes: Data, completion: @escaping @Sendable (ErrandError?) -> Void) {
        guard let driver, !mailbox.isClosed else { return completion(.cancelled) }
        driver.submit(.write(id: id, bytes, completion: completion))
    }
}
