import Foundation
import Testing

@testable import Errand

/// The jar against a hostile server and a hostile file: what a response or the disk may hold
/// and what the jar then costs, keeps and sends.
struct CookieReviewTests {
    @Test func joinedFieldsAreSplitInLinearTime() {
        // URLSession joins the fields; a server controls how many commas follow a cookie.
        let joined = "a=b" + String(repeating: ",", count: 40_000)
        let clock = ContinuousClock()
        let elapsed = clock.measure { _ = SetCookie.fields(joinedBySession: joined) }
        #expect(elapsed < .seconds(1), "took \(elapsed)")
        let split = SetCookie.fields(joinedBySession: "a=b" + String(repeating: ", x", count: 1000) + ", c=d")
        #expect(split.count == 2)
    }
}
