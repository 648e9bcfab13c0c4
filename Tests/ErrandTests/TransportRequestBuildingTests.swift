import Foundation
import Testing

@testable import Errand

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Building the transport request: arguments, headers, auth, custom requests")
struct TransportRequestBuildingTests {
    struct Request: BaseRequest {
        var url = "/path"
        var method: HTTPMethod = .get
        var arguments: [String: any Sendable]?
        var requestSerializerType: RequestSerializerType = .http
        var headers: [String: String] = [:]
        var authorization: (username: String, password: String)?
        var timeoutInterval: TimeInterval = 60
        var custom: URLRequest?
        func buildCustomURLRequest() -> URLRequest? { custom }
    }

    func build(_ request: Request) throws -> TransportRequest {
        let config = NetworkConfig()
        config.baseUrl = "https://api.example.com"
        return try TransportRequestBuilder.build(request, config: config).request
    }

    @Test(arguments: [HTTPMethod.get, .head, .delete])
    func queryMethodsPutArgumentsInTheQuery(method: HTTPMethod) throws {
        let built = try build(Request(method: method, arguments: ["b": 2, "a": "x y"]))
        #expect(built.url.absoluteString == "https://api.example.com/path?a=x%20y&b=2")
        #expect(built.body == nil)
        #expect(built.method == method.rawValue)
    }

    @Test func escapingCoversReservedCharactersAndUnicode() throws {
        let built = try build(Request(arguments: ["q": "a&b=c+d/e?f#g", "ü": "日本"]))
        #expect(
            built.url.absoluteString
                == "https://api.example.com/path?q=a%26b%3Dc%2Bd%2Fe%3Ff%23g&%C3%BC=%E6%97%A5%E6%9C%AC")
    }

    @Test func keysAreSortedSoEqualArgumentsGiveEqualURLs() throws {
        var arguments: [String: any Sendable] = [:]
        for key in (0..<50).map({ "k\($0)" }).shuffled() { arguments[key] = key }
        let first = try build(Request(arguments: arguments)).url
        let second = try build(Request(arguments: Dictionary(uniqueKeysWithValues: arguments.reversed()))).url
        #expect(first == second)
        #expect(first.query?.hasPrefix("k0=k0&k1=k1&k10=k10") == true)
    }

    @Test func nestedValuesUseBrackets() throws {
        let built = try build(
            Request(arguments: ["ids": [1, 2], "user": ["name": "a", "admin": false] as [String: any Sendable]]))
        #expect(built.url.query == "ids%5B%5D=1&ids%5B%5D=2&user%5Badmin%5D=0&user%5Bname%5D=a")
    }

    @Test func argumentsExtendAQueryTheURLAlreadyHas() throws {
        let built = try build(Request(url: "/path?fixed=1", arguments: ["extra": "2"]))
        #expect(built.url.absoluteString == "https://api.example.com/path?fixed=1&extra=2")
    }

    /// RFC 3986 §2.4: the arguments' escapes are never escaped again, whatever `url` holds.
    @Test func argumentsAddedToAQueryWithInvalidCharactersAreEncodedOnce() throws {
        let brackets = try build(Request(url: "/anything?hd=[1]", arguments: ["+foo+": "+bar+"]))
        #expect(brackets.url.absoluteString == "https://api.example.com/anything?hd=%5B1%5D&%2Bfoo%2B=%2Bbar%2B")
        let filter = try build(Request(url: "/books?filter[type]=book", arguments: ["q": "é"]))
        #expect(filter.url.absoluteString == "https://api.example.com/books?filter%5Btype%5D=book&q=%C3%A9")
    }

    @Test(arguments: [HTTPMethod.post, .put, .patch])
    func bodyMethodsSendAFormBody(method: HTTPMethod) throws {
        let built = try build(Request(method: method, arguments: ["name": "Ann Lee", "n": 1.5, "ok": true]))
        #expect(built.url.absoluteString == "https://api.example.com/path")
        #expect(built.body.map { String(decoding: $0, as: UTF8.self) } == "n=1.5&name=Ann%20Lee&ok=1")
        #expect(built.value(forHeader: "content-type") == "application/x-www-form-urlencoded; charset=utf-8")
    }

    @Test func jsonBodyIsCompactWithSortedKeys() throws {
        var request = Request(
            method: .post,
            arguments: [
                "z": [1, 2.5, "x\"y\n"] as [any Sendable], "a": NSNull(), "m": ["t": true] as [String: any Sendable],
            ])
        request.requestSerializerType = .json
        let built = try build(request)
        #expect(
            built.body.map { String(decoding: $0, as: UTF8.self) } == #"{"a":null,"m":{"t":true},"z":[1,2.5,"x\"y\n"]}"#
        )
        #expect(built.value(forHeader: "Content-Type") == "application/json")
    }

    @Test func foundationAndOptionalValuesEncode() throws {
        let none: String? = nil
        let some: String? = "x"
        var request = Request(method: .post)
        request.arguments = [
            "n": NSNumber(value: 3), "t": NSNumber(value: true), "none": none, "some": some,
            "d": Decimal(string: "1.25") ?? 0, "u": URL(string: "https://x.example/z?a=1") as Any as? URL,
            "i8": Int8(-5),
        ]
        request.requestSerializerType = .json
        let built = try build(request)
        #expect(
            built.body.map { String(decoding: $0, as: UTF8.self) }
                == #"{"d":1.25,"i8":-5,"n":3,"none":null,"some":"x","t":true,"u":"https://x.example/z?a=1"}"#)
    }

    @Test func unencodableArgumentsAreASerializationError() {
        #expect(throws: ErrandError.serialization("arguments.n is nan, which JSON and URLs cannot carry")) {
            try build(Request(arguments: ["n": Double.nan]))
        }
        struct Opaque: Sendable {}
        #expect(throws: ErrandError.self) { try build(Request(arguments: ["o": Opaque()])) }
    }

    @Test func basicAuthIsAnAuthorizationHeader() throws {
        let built = try build(Request(authorization: ("ann", "pä:ss")))
        #expect(built.value(forHeader: "Authorization") == "Basic " + Data("ann:pä:ss".utf8).base64EncodedString())
    }

    @Test func requestHeadersOverrideDerivedOnes() throws {
        var request = Request(
            method: .post, arguments: ["a": 1], headers: ["content-type": "text/plain", "X-Trace": "1"])
        request.authorization = ("u", "p")
        let built = try build(request)
        #expect(built.value(forHeader: "Content-Type") == "text/plain")
        #expect(built.headers.keys.filter { $0.lowercased() == "content-type" }.count == 1)
        #expect(built.value(forHeader: "X-Trace") == "1")
    }

    @Test func timeoutIsCarried() throws {
        #expect(try build(Request(timeoutInterval: 7)).timeoutInterval == 7)
    }

    @Test func customURLRequestReplacesEverything() throws {
        var custom = URLRequest(url: URL(string: "https://elsewhere.example.net/raw")!, timeoutInterval: 5)
        custom.httpMethod = "PUT"
        custom.httpBody = Data("raw".utf8)
        custom.setValue("1", forHTTPHeaderField: "X-Custom")
        let built = try build(
            Request(url: "/ignored", arguments: ["ignored": 1], headers: ["X-Ignored": "1"], custom: custom))
        #expect(built.url.absoluteString == "https://elsewhere.example.net/raw")
        #expect(built.method == "PUT")
        #expect(built.body == Data("raw".utf8))
        #expect(built.headers == ["X-Custom": "1"])
        #expect(built.timeoutInterval == 5)
    }
}

@Suite("The default User-Agent")
struct UserAgentTests {
    struct Request: BaseRequest {
        var url: String { "/path" }
        var headers: [String: String] = [:]
    }

    func userAgent(_ request: Request, configure: (NetworkConfig) -> Void = { _ in }) throws -> String? {
        let config = NetworkConfig()
        config.baseUrl = "https://api.example.com"
        configure(config)
        return try TransportRequestBuilder.build(request, config: config).request.value(forHeader: "User-Agent")
    }

    @Test func namesTheAppItsVersionAndErrand() throws {
        let process = ProcessInfo.processInfo.processName
        #expect(try userAgent(Request()) == "\(process) Errand/\(UserAgent.errandVersion)")
        #expect(
            try userAgent(Request()) { $0.appVersion = "2.4.1" } == "\(process)/2.4.1 Errand/\(UserAgent.errandVersion)"
        )
    }

    @Test func separatorsInTheNameOrVersionDoNotSplitTheProduct() {
        #expect(UserAgent.value(appVersion: "1.0 (beta)").hasSuffix("/1.0--beta- Errand/\(UserAgent.errandVersion)"))
    }

    @Test func theRequestsOwnHeaderWinsWhateverItsCase() throws {
        #expect(try userAgent(Request(headers: ["user-agent": "Shop/3.0"])) == "Shop/3.0")
    }

    @Test func theSessionConfigurationsHeaderWins() throws {
        let session = URLSessionConfiguration.default
        session.httpAdditionalHeaders = ["User-Agent": "Kiosk/1"]
        #expect(try userAgent(Request()) { $0.sessionConfiguration = session } == nil)
    }
}
