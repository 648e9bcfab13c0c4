import Dispatch
import Testing

@testable import Errand

/// The curl loop's timeout checks: due ones come out, in order, once; ended requests and
/// later reschedules cost nothing.
@Suite("CurlDeadlines")
struct CurlDeadlinesTests {
    private let start = DispatchTime(uptimeNanoseconds: 1_000_000_000)

    private func at(milliseconds: UInt64) -> DispatchTime {
        DispatchTime(uptimeNanoseconds: start.uptimeNanoseconds + milliseconds * 1_000_000)
    }

    @Test func dueChecksComeOutOnceInOrderAndLaterOnesWait() {
        var deadlines = CurlDeadlines()
        deadlines.schedule(3, at: at(milliseconds: 30))
        deadlines.schedule(1, at: at(milliseconds: 10))
        deadlines.schedule(2, at: at(milliseconds: 20))
        deadlines.schedule(4, at: nil)
        #expect(deadlines.takeDue(at: at(milliseconds: 5)) == [])
        #expect(deadlines.takeDue(at: at(milliseconds: 20)) == [1, 2])
        #expect(deadlines.takeDue(at: at(milliseconds: 20)) == [])
        #expect(deadlines.takeDue(at: at(milliseconds: 1000)) == [3])
    }

    @Test func aLaterExpiryKeepsTheEarlierCheckAndAnEarlierOneReplacesIt() {
        var deadlines = CurlDeadlines()
        deadlines.schedule(1, at: at(milliseconds: 10))
        deadlines.schedule(1, at: at(milliseconds: 50))
        #expect(deadlines.takeDue(at: at(milliseconds: 10)) == [1])
        deadlines.schedule(2, at: at(milliseconds: 50))
        deadlines.schedule(2, at: at(milliseconds: 20))
        #expect(deadlines.takeDue(at: at(milliseconds: 20)) == [2])
        #expect(deadlines.takeDue(at: at(milliseconds: 50)) == [])
    }

    @Test func aCancelledRequestIsNeverDue() {
        var deadlines = CurlDeadlines()
        deadlines.schedule(1, at: at(milliseconds: 10))
        deadlines.cancel(1)
        #expect(deadlines.takeDue(at: at(milliseconds: 100)) == [])
        #expect(deadlines.milliseconds(from: start, atMost: 1000) == 1000)
    }

    @Test func theWaitIsUntilTheNextLiveCheckRoundedUp() {
        var deadlines = CurlDeadlines()
        #expect(deadlines.milliseconds(from: start, atMost: 1000) == 1000)
        deadlines.schedule(1, at: DispatchTime(uptimeNanoseconds: start.uptimeNanoseconds + 2_500_000))
        deadlines.schedule(2, at: at(milliseconds: 5))
        #expect(deadlines.milliseconds(from: start, atMost: 1000) == 3)
        deadlines.cancel(1)
        #expect(deadlines.milliseconds(from: start, atMost: 1000) == 5)
        #expect(deadlines.milliseconds(from: at(milliseconds: 9), atMost: 1000) == 0)
        #expect(deadlines.milliseconds(from: start, atMost: 2) == 2)
    }

    @Test func manyRequestsEndingBeforeTheirTimeoutLeaveTheLiveOnesDueInOrder() {
        var deadlines = CurlDeadlines()
        // As under load: each request's check is an idle timeout away, and most end long before it.
        for id in 0..<100_000 {
            deadlines.schedule(id, at: at(milliseconds: UInt64(60_000 + id)))
            if id % 1000 != 0 { deadlines.cancel(id) }
        }
        #expect(deadlines.storedChecks <= 2 * 100 + 64 + 1)
        #expect(
            deadlines.takeDue(at: at(milliseconds: 60_000 + 100_000)) == Array(stride(from: 0, to: 100_000, by: 1000)))
    }
}
