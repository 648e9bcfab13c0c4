import Errand
import Foundation
import Testing

extension Scenario {
    /// Every scenario, in a stable order.
    public static let all: [Scenario] = requests + transfers + validation

    private static let requests: [Scenario] = [
        Scenario("GET sends arguments in the query, escaped") { server in
            let arguments: [String: any Sendable] = [
                "plain": "value", "spaced": "a b", "symbols": "a&b=c+d/e?f", "ünï": "çødé",
            ]
            let response = try await server.makeAgent().response(HTTPBinRequest("/get", arguments: arguments))
            #expect(response.statusCode == 200)
            let args = response.object["args"] as? [String: String]
            #expect(args == ["plain": "value", "spaced": "a b", "symbols": "a&b=c+d/e?f", "ünï": "çødé"])
        },
        Scenario("arguments added to a query that url already has are encoded once, brackets and all") { server in
            let agent = server.makeAgent()
            let brackets = try await agent.response(HTTPBinRequest("/anything?hd=[1]", arguments: ["+foo+": "+bar+"]))
            #expect(brackets.object["args"] as? [String: String] == ["hd": "[1]", "+foo+": "+bar+"])
            let filter = try await agent.response(HTTPBinRequest("/anything?filter[type]=book", arguments: ["q": "é"]))
            #expect(filter.object["args"] as? [String: String] == ["filter[type]": "book", "q": "é"])
        },
        Scenario("POST sends a form body") { server in
            let request = HTTPBinRequest(
                "/post", method: .post, arguments: ["name": "Ann Lee", "level": 3, "note": "x+y=z&w"])
            let response = try await server.makeAgent().response(request)
            #expect(
                response.object["form"] as? [String: String] == ["name": "Ann Lee", "level": "3", "note": "x+y=z&w"])
            let headers = response.object["headers"] as? [String: String]
            #expect(headers?["Content-Type"]?.hasPrefix("application/x-www-form-urlencoded") == true)
        },
        Scenario("POST, PUT and PATCH send a JSON body") { server in
            for method in [HTTPMethod.post, .put, .patch] {
                var request = HTTPBinRequest("/\(method.rawValue.lowercased())", method: method)
                request.arguments = [
                    "name": "Ann", "tags": ["a", "b"],
                    "nested": ["ok": true, "none": NSNull()] as [String: any Sendable],
                ]
                request.requestSerializerType = .json
                let response = try await server.makeAgent().response(request)
                let json = response.object["json"] as? [String: Any]
                #expect(json?["name"] as? String == "Ann", "\(method)")
                #expect(json?["tags"] as? [String] == ["a", "b"], "\(method)")
                let nested = json?["nested"] as? [String: Any]
                #expect(nested?["ok"] as? Bool == true, "\(method)")
                #expect(nested?["none"] is NSNull, "\(method)")
            }
        },
        Scenario("DELETE sends arguments in the query") { server in
            let response = try await server.makeAgent().response(
                HTTPBinRequest("/delete", method: .delete, arguments: ["id": 7]))
            #expect(response.object["args"] as? [String: String] == ["id": "7"])
        },
        Scenario("every method reaches /anything with its own name") { server in
            let agent = server.makeAgent()
            // HEAD has no body to echo in; httpbin answers OPTIONS itself, with its Allow field.
            for method in HTTPMethod.allCases where method != .head && method != .options {
                let response = try await agent.response(HTTPBinRequest("/anything/item", method: method))
                #expect(response.object["method"] as? String == method.rawValue)
            }
            let head = try await agent.response(HTTPBinRequest("/anything/item", method: .head))
            #expect(head.statusCode == 200)
            #expect(head.data.isEmpty)
            var optionsRequest = HTTPBinRequest("/anything/item", method: .options)
            optionsRequest.responseSerializerType = .data
            let options = await agent.finishedTask(optionsRequest)
            #expect(options.error == nil)
            #expect(options.sentRequest?.method == "OPTIONS")
        },
        Scenario("custom headers are sent") { server in
            var request = HTTPBinRequest("/headers")
            request.headers = ["X-Errand-Test": "yes", "Accept": "application/json"]
            let response = try await server.makeAgent().response(request)
            let headers = response.object["headers"] as? [String: String]
            #expect(headers?["X-Errand-Test"] == "yes")
            #expect(headers?["Accept"] == "application/json")
        },
        Scenario("response headers are exposed") { server in
            let agent = server.makeAgent()
            let task = await agent.finishedTask(
                HTTPBinRequest("/response-headers", arguments: ["X-Errand-Reply": "pong"]))
            #expect(task.error == nil)
            #expect(task.response?.value(forHeader: "x-errand-reply") == "pong")
            #expect(task.responseHeaders.contains { $0.key.lowercased() == "content-type" })
        },
        Scenario("Basic auth with the right password succeeds") { server in
            var request = HTTPBinRequest("/basic-auth/ann/s3cret")
            request.authorization = ("ann", "s3cret")
            request.jsonValidator = ["authenticated": .bool, "user": .string]
            let response = try await server.makeAgent().response(request)
            #expect(response.object["authenticated"] as? Bool == true)
            #expect(response.object["user"] as? String == "ann")
        },
        Scenario("Basic auth with a wrong password fails with the 401") { server in
            var request = HTTPBinRequest("/basic-auth/ann/s3cret")
            request.authorization = ("ann", "wrong")
            request.timeoutInterval = 10
            let task = await server.makeAgent().finishedTask(request)
            #expect(task.error == .statusCode(401))
            #expect(task.responseStatusCode == 401)
        },
        Scenario("a JSON validator that matches lets the response through") { server in
            var request = HTTPBinRequest("/get", arguments: ["key": "value"])
            request.jsonValidator = [
                "args": ["key": .string], "headers": .object([:]), "url": .string, "missing": .optional(.number),
            ]
            let response = try await server.makeAgent().response(request)
            #expect(response.statusCode == 200)
        },
        Scenario("a JSON validator mismatch names the path") { server in
            var request = HTTPBinRequest("/post", method: .post, arguments: ["key1": "one", "key2": 2])
            request.requestSerializerType = .json
            request.jsonValidator = ["json": ["key1": .string, "key2": .string]]
            let task = await server.makeAgent().finishedTask(request)
            #expect(task.error == .jsonValidation(path: "$.json.key2", expected: "string", found: "number"))
            #expect(
                task.error.map(String.init(describing:))?.contains("$.json.key2: expected string, found number") == true
            )
        },
        Scenario("a custom status validator accepts 418 and rejects 200") { server in
            var request = HTTPBinRequest("/status/418")
            request.acceptedStatusCodes = [418]
            request.responseSerializerType = .data
            let agent = server.makeAgent()
            let teapot = await agent.finishedTask(request)
            #expect(teapot.error == nil)
            #expect(teapot.responseStatusCode == 418)
            request.url = "/status/200"
            let ok = await agent.finishedTask(request)
            #expect(ok.error == .statusCode(200))
        },
        Scenario("a 404 fails with its status code") { server in
            let task = await server.makeAgent().finishedTask(HTTPBinRequest("/status/404"))
            #expect(task.error == .statusCode(404))
            #expect(task.response?.statusCode == 404)
        },
        Scenario("a body that is not JSON is a serialization error") { server in
            let task = await server.makeAgent().finishedTask(HTTPBinRequest("/bytes/64", arguments: ["seed": 7]))
            guard case .serialization(let reason) = task.error else {
                Issue.record("expected a serialization error, got \(String(describing: task.error))")
                return
            }
            #expect(reason.contains("/bytes/64"))
        },
        Scenario("the data serializer returns the raw bytes") { server in
            var request = HTTPBinRequest("/bytes/2048", arguments: ["seed": 3])
            request.responseSerializerType = .data
            let response = try await server.makeAgent().response(request)
            #expect(response.data.count == 2048)
        },
        Scenario("decoded(_:) decodes the JSON body, and names the failing path") { server in
            struct Slideshow: Decodable {
                struct Body: Decodable {
                    let title: String
                    let slides: [Slide]
                }
                struct Slide: Decodable { let title: String }
                let slideshow: Body
            }
            let slideshow = try await server.makeAgent().decoded(HTTPBinRequest("/json"), Slideshow.self)
            #expect(slideshow.slideshow.title == "Sample Slide Show")
            #expect(slideshow.slideshow.slides.count == 2)
            struct Wrong: Decodable { let missing: Int }
            await #expect(throws: ErrandError.self) {
                try await server.makeAgent().decoded(HTTPBinRequest("/json"), Wrong.self)
            }
        },
        Scenario("delay/1 passes with a 6 s timeout") { server in
            var request = HTTPBinRequest("/delay/1")
            // Generous: on a busy machine the response can reach the client seconds late.
            request.timeoutInterval = 6
            let response = try await server.makeAgent().response(request)
            #expect(response.statusCode == 200)
        },
        Scenario("delay/3 fails with a 1 s timeout") { server in
            var request = HTTPBinRequest("/delay/3")
            request.timeoutInterval = 1
            let task = await server.makeAgent().finishedTask(request)
            #expect(task.error == .timedOut)
        },
        Scenario("cancelling the Swift task cancels the request") { server in
            let agent = server.makeAgent()
            let call = Task { () async -> (outcome: Result<Response, ErrandError>, waited: Duration) in
                // Timed from when the task runs: a busy machine may start it late, which is not Errand's doing.
                let started = ContinuousClock.now
                do throws(ErrandError) {
                    let response = try await agent.response(HTTPBinRequest("/delay/10"))
                    return (.success(response), ContinuousClock.now - started)
                } catch {
                    return (.failure(error), ContinuousClock.now - started)
                }
            }
            call.cancel()
            let (outcome, waited) = await call.value
            #expect(throws: ErrandError.cancelled) { try outcome.get() }
            #expect(waited < .seconds(8), "it must not wait for the server's delay")
        },
        Scenario("1000 requests started from many threads and cancelled call back once each, with their own tag") {
            server in
            let agent = server.makeAgent()
            let count = 1000
            let seen = await withCheckedContinuation {
                (continuation: CheckedContinuation<[Int: [ErrandError?]], Never>) in
                let record = RecordedCallbacks(expected: count, continuation: continuation)
                // Off the concurrency pool: blocking it for the whole burst would stall other tests.
                Thread {
                    DispatchQueue.concurrentPerform(iterations: count) { index in
                        let task = agent.start(
                            HTTPBinRequest("/delay/2", arguments: ["i": index]),
                            success: { record.add(tag: $0.tag, error: $0.error) },
                            failure: { record.add(tag: $0.tag, error: $0.error) })
                        task.tag = index
                        task.cancel()
                    }
                }.start()
            }
            #expect(seen.count == count)
            #expect(seen.values.allSatisfy { $0 == [.cancelled] })
        },
    ]
}

/// Collects one callback per tag and resumes once all have arrived.
private final class RecordedCallbacks: @unchecked Sendable {  // Sendable because `lock` guards every field.
    private let lock = NSLock()
    private var seen: [Int: [ErrandError?]] = [:]
    private var remaining: Int
    private let continuation: CheckedContinuation<[Int: [ErrandError?]], Never>

    init(expected: Int, continuation: CheckedContinuation<[Int: [ErrandError?]], Never>) {
        remaining = expected
        self.continuation = continuation
    }

    func add(tag: Int, error: ErrandError?) {
        lock.lock()
        seen[tag, default: []].append(error)
        remaining -= 1
        let finished = remaining == 0 ? seen : nil
        lock.unlock()
        if let finished { continuation.resume(returning: finished) }
    }
}
