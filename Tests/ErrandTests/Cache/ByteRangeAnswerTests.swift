import Foundation
import Testing

@testable import Errand

/// A `Range` answered from a whole stored response (RFC 9110 §14.2, §13.1.5), with cases from
/// cache-tests.fyi's `partial` tests.
@Suite("HTTP cache: a byte range cut from a stored response")
struct ByteRangeAnswerTests {
    static let stored = Response(
        statusCode: 200, headers: ["ETag": #""v1""#, "Last-Modified": "Sun, 01 Nov 2026 00:00:00 GMT", "A": "1"],
        data: Data("01234567890".utf8), isDataFromCache: true)

    @Test(arguments: [
        ("bytes=0-1", 0..<2), ("bytes=5-", 5..<11), ("bytes=-5", 6..<11), ("bytes=-50", 0..<11),
        ("bytes=3-999", 3..<11), ("Bytes=2-3", 2..<4), (" bytes= 2-3 ", 2..<4), ("bytes=10-10", 10..<11),
        ("bytes=0-99999999999999999999999", 0..<11),
    ])
    func oneRangeIsClippedToTheBody(field: String, expected: Range<Int>) {
        #expect(ByteRangeAnswer.range(field, length: 11) == expected)
    }

    @Test(arguments: [
        "bytes=11-", "bytes=5-4", "bytes=-0", "bytes=0-1,3-4", "bytes=", "bytes=-", "items=0-1", "bytes=a-1",
        "bytes=+1-2", "bytes=1", "0-1", "bytes = 2-3", "bytes=2 - 3",
    ])
    func anythingElseIsNoRange(field: String) {
        #expect(ByteRangeAnswer.range(field, length: 11) == nil)
    }

    @Test func theRangeIsA206WithItsContentRangeAndTheStoredFields() {
        let answer = ByteRangeAnswer.answer(["range": "bytes=0-1"], from: Self.stored)
        #expect(answer.statusCode == 206)
        #expect(answer.data == Data("01".utf8))
        #expect(answer.value(forHeader: "Content-Range") == "bytes 0-1/11")
        #expect(answer.value(forHeader: "Content-Length") == "2")
        #expect(answer.value(forHeader: "A") == "1")
        #expect(answer.isDataFromCache)
    }

    @Test(arguments: [
        (#""v1""#, true), (#"W/"v1""#, false), (#""v2""#, false),
        ("Sun, 01 Nov 2026 00:00:00 GMT", true), ("Mon, 02 Nov 2026 00:00:00 GMT", false),
    ])
    func anIfRangeMustMatchStronglyOrTheWholeBodyIsTheAnswer(ifRange: String, cuts: Bool) {
        let answer = ByteRangeAnswer.answer(["Range": "bytes=0-1", "If-Range": ifRange], from: Self.stored)
        #expect(answer.statusCode == (cuts ? 206 : 200))
    }

    /// A stored body may be a slice of a larger buffer (whatever `Data` the app saved): its
    /// indices do not start at zero.
    @Test func aRangeOfABodyThatIsASliceIsCutFromTheSlice() {
        let buffer = Data("xxxx01234567890".utf8)
        let stored = Response(statusCode: 200, data: buffer[4...], isDataFromCache: true)
        #expect(stored.data.startIndex == 4)
        let answer = ByteRangeAnswer.answer(["Range": "bytes=1-3"], from: stored)
        #expect(answer.statusCode == 206)
        #expect(answer.data == Data("123".utf8))
        #expect(ByteRangeAnswer.answer(["Range": "bytes=-2"], from: stored).data == Data("90".utf8))
    }

    @Test func aStoredStatusOtherThan200IsNotCut() {
        let notFound = Response(statusCode: 404, data: Data("missing".utf8))
        #expect(ByteRangeAnswer.answer(["Range": "bytes=0-1"], from: notFound).statusCode == 404)
    }
}
