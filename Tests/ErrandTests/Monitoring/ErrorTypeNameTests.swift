import Errand
import Foundation
import Testing

/// `ErrandError.typeName`: what metrics and traces record as `error.type`.
@Suite("ErrandError.typeName")
struct ErrorTypeNameTests {
    @Test func aRefusedStatusIsItsCodeAndEveryOtherKindAWordWithoutItsDetails() throws {
        #expect(ErrandError.statusCode(503).typeName == "503")
        #expect(ErrandError.timedOut.typeName == "timeout")
        #expect(ErrandError.cancelled.typeName == "cancelled")
        #expect(ErrandError.cacheMiss(.expired).typeName == "cache_miss")
        let url = try #require(URL(string: "https://h/?token=t"))
        let failure = ErrandError.transport(
            URLError(.cannotConnectToHost, userInfo: [NSURLErrorFailingURLErrorKey: url]))
        #expect(failure.typeName == "transport")
        #expect(ErrandError.invalidURL("https://h/?token=t").typeName == "invalid_url")
        #expect(ErrandError.fileSystem("/secret/path").typeName == "file_system")
    }
}
