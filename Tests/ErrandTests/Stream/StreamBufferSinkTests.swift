import Foundation
import Testing

@testable import Errand

/// A buffer diverted to a sink, as a WebSocket's reader takes its connection's bytes.
@Suite("Stream buffer: a sink on the producer's thread")
struct StreamBufferSinkTests {
    /// What a buffer told its transfer and handed its sink, in order.
    final class Record: Sendable {
        let flow = Locked<[Bool]>([])
        let deliveries = Locked<[String]>([])

        func sink(_ delivery: StreamBuffer.Delivery) {
            switch delivery {
            case .chunk(let chunk): deliveries.withLock { $0.append(String(decoding: chunk, as: UTF8.self)) }
            case .end(let error): deliveries.withLock { $0.append("end \(error.map { "\($0)" } ?? "nil")") }
            }
        }
    }

    @Test func chunksThatPausedTheTransferBeforeTheDivertReachTheSinkAndThePauseIsLifted() {
        let record = Record()
        let buffer = StreamBuffer(limit: 4) { pause in record.flow.withLock { $0.append(pause) } }
        buffer.push(Data("abc".utf8))
        buffer.push(Data("def".utf8))
        #expect(record.flow[\.self] == [true], "6 bytes over a limit of 4 pause the transfer")

        #expect(buffer.divert(to: record.sink))
        // No reader of the buffer would ever lift that pause: the divert does, and the sink decides from then on.
        #expect(record.flow[\.self] == [true, false])
        #expect(record.deliveries[\.self] == ["abc", "def"])

        buffer.push(Data("ghi".utf8))
        buffer.push(Data("jklmnop".utf8))
        buffer.finish(nil)
        buffer.push(Data("late".utf8))
        #expect(record.deliveries[\.self] == ["abc", "def", "ghi", "jklmnop", "end nil"])
        #expect(record.flow[\.self] == [true, false], "a sink's chunks are never held against the buffer's limit")
        #expect(!buffer.claim(), "a diverted buffer has its one consumer")
    }

    @Test func anEndBeforeTheDivertComesAfterTheChunksAndOnlyOnce() {
        let record = Record()
        let buffer = StreamBuffer(limit: 1 << 20) { _ in }
        buffer.push(Data("last".utf8))
        buffer.finish(.timedOut)
        #expect(buffer.divert(to: record.sink))
        buffer.cancel(with: .cancelled)
        #expect(record.deliveries[\.self] == ["last", "end \(ErrandError.timedOut)"])
        #expect(!buffer.divert(to: record.sink))
    }

    @Test func aDivertWhileTheProducerPushesLosesNoChunkAndKeepsTheirOrder() async {
        let record = Record()
        let buffer = StreamBuffer(limit: 1 << 30) { _ in }
        let producer = Task.detached {
            for index in 0..<2000 { buffer.push(Data("\(index)".utf8)) }
        }
        // Some chunks wait in the buffer, some arrive while the backlog is handed over, some after.
        while !buffer.hasReceivedBody { await Task.yield() }
        #expect(buffer.divert(to: record.sink))
        await producer.value
        buffer.finish(nil)
        #expect(record.deliveries[\.self] == (0..<2000).map { "\($0)" } + ["end nil"])
    }
}
