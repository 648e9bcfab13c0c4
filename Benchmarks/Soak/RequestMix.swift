import Errand
import Foundation

/// The soak's steady mix of requests: `workers` loops, each sending one request after another
/// with a short pause — GETs and POSTs checked against their echo, cached resources (HTTP
/// caching and the app's own), bodies read whole and resumable downloads, every byte checked.
/// Failures the proxy's faults cause are counted, not breaches; an answer that is wrong is.
final class RequestMix: Sendable {
    private let agent: NetworkAgent
    private let tally: SoakTally
    private let folder: URL
    private let workers: Int
    private let seed: UInt64

    /// Attempts a download gets, each resuming the last, before the soak gives up on it.
    static let downloadAttempts = 8

    init(agent: NetworkAgent, tally: SoakTally, folder: URL, workers: Int, seed: UInt64) {
        self.agent = agent
        self.tally = tally
        self.folder = folder
        self.workers = workers
        self.seed = seed
    }

    /// Runs the workers until `stop` is set; each finishes the request it is in.
    func run(until stop: Flag) async {
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<workers {
                group.addTask { [self] in await work(worker, until: stop) }
            }
        }
    }

    private func work(_ worker: Int, until stop: Flag) async {
        var random = SoakRandom(seed: seed &+ UInt64(worker) &* 104_729)
        var index = 0
        while !stop.isSet {
            index += 1
            let roll = random.int(in: 0...99)
            switch roll {
            case 0..<30: await get(worker, index)
            case 30..<45: await post(worker, index)
            case 45..<62: await httpCached(random.int(in: 0...(SoakResource.count - 1)))
            case 62..<78: await appCached(random.int(in: 0...(SoakResource.count - 1)))
            case 78..<90: await bytes(SoakRequests.byteSizes[random.int(in: 0...1)])
            default: await download(worker, SoakRequests.downloadSizes[random.int(in: 0...2)], until: stop)
            }
            try? await Task.sleep(for: .milliseconds(random.int(in: 0...100)))
        }
    }

    // MARK: The requests

    private func get(_ worker: Int, _ index: Int) async {
        let outcome = await started(SoakRequests.Get(worker: worker, index: index))
        check("get", outcome) { response in
            let args = (response.jsonObject as? [String: Any])?["args"] as? [String: Any]
            let isRight = args?["i"] as? String == String(index) && args?["w"] as? String == String(worker)
            return isRight ? nil : "the echo of another request: \(response.string?.prefix(120) ?? "")"
        }
    }

    private func post(_ worker: Int, _ index: Int) async {
        let request = SoakRequests.Post(worker: worker, index: index)
        let outcome = await started(request)
        check("post", outcome) { response in
            let json = (response.jsonObject as? [String: Any])?["json"] as? [String: Any]
            let isRight =
                json?["i"] as? Int == index && json?["w"] as? Int == worker
                && (json?["pad"] as? String)?.utf8.count == 64 + index % 2048
            return isRight ? nil : "not the echo of its body: \(response.string?.prefix(120) ?? "")"
        }
    }

    private func httpCached(_ index: Int) async {
        let request = SoakRequests.HTTPCached(index: index)
        let outcome: Result<Response, ErrandError>
        do {
            outcome = .success(try await agent.response(request))
        } catch {
            outcome = .failure(error)
        }
        check("http-cached", outcome) {
            Self.difference(Data(($0.string ?? "").utf8), Data(SoakResource.body(SoakResource.httpCached(index)).utf8))
        }
    }

    private func appCached(_ index: Int) async {
        let outcome = await started(SoakRequests.AppCached(index: index))
        check("app-cached", outcome) {
            Self.difference(Data(($0.string ?? "").utf8), Data(SoakResource.body(SoakResource.appCached(index)).utf8))
        }
    }

    private func bytes(_ size: Int) async {
        let outcome: Result<Response, ErrandError>
        do {
            outcome = .success(try await agent.response(SoakRequests.Bytes(size: size)))
        } catch {
            outcome = .failure(error)
        }
        check("bytes", outcome) { Self.difference($0.data, SoakRequests.expected[size] ?? Data()) }
    }

    /// A download to a file of the worker's own, resumed up to ``downloadAttempts`` times, or
    /// until the soak stops.
    private func download(_ worker: Int, _ size: Int, until stop: Flag) async {
        let path = folder.appendingPathComponent("w\(worker)-\(size).bin").path
        let request = SoakRequests.Download(size: size, path: path)
        for attempt in 1...Self.downloadAttempts {
            let outcome: Result<Response, ErrandError>
            do {
                outcome = .success(try await agent.response(request))
            } catch {
                outcome = .failure(error)
            }
            guard case .success(let response) = outcome else {
                check("download", outcome) { _ in nil }
                if stop.isSet { return }
                continue
            }
            let file = response.fileURL
            let bytes = file.flatMap { try? Data(contentsOf: $0) } ?? Data()
            check("download", outcome) { response in
                Self.difference(bytes, SoakRequests.expected[size] ?? Data()).map {
                    "/download/\(size), attempt \(attempt): the file \($0)"
                        + " (last answer \(response.statusCode) \(response.value(forHeader: "Content-Range") ?? ""))"
                }
            }
            if attempt > 1 { tally.count("http.download.resumed") }
            file.map { try? FileManager.default.removeItem(at: $0) }
            return
        }
        tally.count("http.download.gave-up")
    }

    // MARK: Outcomes

    /// Starts `request` with callbacks and waits for them: a second callback is a breach.
    private func started(_ request: any BaseRequest) async -> Result<Response, ErrandError> {
        let once = CallbackOnce(tally: tally, url: request.url)
        return await withCheckedContinuation { continuation in
            once.arm(continuation)
            agent.start(
                request,
                success: { task in
                    once.resolve(task.response.map { .success($0) } ?? .failure(.serialization("no response")))
                },
                failure: { [tally] task in
                    if case .statusCode(let status) = task.error {
                        // Which connection's bytes the server could not read: the request and its answer.
                        let answer =
                            task.responseString.map { String($0.prefix(120)) }?
                            .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
                        tally.breach(
                            "every answer is the server's, unchanged",
                            "\(task.sentRequest?.url.absoluteString ?? request.url) was answered \(status): \(answer)")
                    }
                    once.resolve(.failure(task.error ?? .serialization("no error")))
                })
        }
    }

    /// Counts `outcome` under `kind`; a response `problem` finds wrong (it says how; `nil` when
    /// right), and an error that only a wrong answer explains, are breaches.
    private func check(
        _ kind: String, _ outcome: Result<Response, ErrandError>, problem: (Response) -> String?
    ) {
        switch outcome {
        case .success(let response):
            if let problem = problem(response) {
                tally.count("http.\(kind).wrong")
                return tally.breach(
                    "every answer is the server's, unchanged", "\(kind): a \(response.statusCode) answer: \(problem)")
            }
            tally.count("http.\(kind).ok")
            if response.isDataFromCache { tally.count("http.\(kind).from-cache") }
            if response.isRevalidated { tally.count("http.\(kind).revalidated") }
        case .failure(let error):
            let reason = Self.reason(error)
            tally.count("http.\(kind).failed")
            tally.count("http.failure.\(reason)")
            switch error {
            case .statusCode where kind == "get" || kind == "post" || kind == "app-cached":
                // Told with the answer's body where the callback had it.
                break
            case .statusCode, .serialization, .jsonValidation, .decoding:
                tally.breach("every answer is the server's, unchanged", "\(kind) failed: \(error)")
            default:
                break
            }
        }
    }

    /// How `bytes` differ from `expected`: their lengths and the first byte that differs; `nil` when equal.
    static func difference(_ bytes: Data, _ expected: Data) -> String? {
        guard bytes != expected else { return nil }
        let first =
            zip(bytes, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            ?? min(bytes.count, expected.count)
        return "has \(bytes.count) bytes where the server sent \(expected.count); the first to differ is byte \(first)"
    }

    /// A short, stable name for a failure, to count failures by.
    static func reason(_ error: ErrandError) -> String {
        switch error {
        case .transport(let failure): "transport \(failure.code.rawValue)"
        case .timedOut: "timed out"
        case .cancelled: "cancelled"
        case .statusCode(let status): "status \(status)"
        case .serialization: "serialization"
        case .jsonValidation: "JSON validation"
        case .fileSystem: "file system"
        default: "\(error)".prefix(40).description
        }
    }
}

/// Resumes a waiting caller with a request's first callback; notes any other.
private final class CallbackOnce: @unchecked Sendable {  // every `var` is read and written only while holding `lock`
    private let lock = NSLock()
    private let tally: SoakTally
    private let url: String
    private var continuation: CheckedContinuation<Result<Response, ErrandError>, Never>?
    private var calls = 0

    init(tally: SoakTally, url: String) {
        self.tally = tally
        self.url = url
    }

    func arm(_ continuation: CheckedContinuation<Result<Response, ErrandError>, Never>) {
        lock.withLock { self.continuation = continuation }
    }

    func resolve(_ outcome: Result<Response, ErrandError>) {
        let waiting = lock.withLock { () -> CheckedContinuation<Result<Response, ErrandError>, Never>? in
            calls += 1
            defer { continuation = nil }
            return continuation
        }
        guard let waiting else {
            return tally.breach("every request ends exactly once", "a second callback for \(url)")
        }
        waiting.resume(returning: outcome)
    }
}
