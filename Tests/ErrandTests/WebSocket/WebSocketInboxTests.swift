import Foundation
import Testing

@testable import Errand

/// The messages between a socket's reader and its consumer: bounded, and let go of once taken.
@Suite("WebSocket: the inbox")
struct WebSocketInboxTests {
    /// A binary message whose bytes count themselves freed.
    static func message(size: Int, freed: Locked<Int>) -> WebSocketMessage {
        let bytes = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 1)
        return .binary(
            Data(
                bytesNoCopy: bytes, count: size,
                deallocator: .custom { pointer, _ in
                    pointer.deallocate()
                    freed.withLock { $0 += 1 }
                }))
    }

    @Test func aConsumerThatNeverCatchesUpHoldsOnlyTheMessagesWaiting() async throws {
        let freed = Locked(0)
        let inbox = WebSocketInbox(limit: 1 << 20) { _ in }
        #expect(inbox.claim())
        // The reader stays ahead: the inbox is never empty while the consumer takes 1,000 messages.
        inbox.put([Self.message(size: 64 << 10, freed: freed)])
        for _ in 0..<1000 {
            inbox.put([Self.message(size: 64 << 10, freed: freed)])
            _ = try await inbox.next()
        }
        #expect(freed.withLock { $0 } >= 990, "\(freed.withLock { $0 }) of 1000 messages taken were let go of")
    }
}

extension WebSocketInboxTests {
    @Test func aFloodOfEmptyMessagesPausesTheReadingToo() {
        let paused = Locked(false)
        let inbox = WebSocketInbox(limit: 1 << 20) { pause in paused.withLock { $0 = pause } }
        #expect(inbox.claim())
        // 200 KB on the wire (2 bytes a frame), each message an element the inbox holds.
        for _ in 0..<100_000 { inbox.put([.binary(Data())]) }
        #expect(paused.withLock { $0 }, "100,000 empty messages waited and the reading never paused")
    }
}
