import CErrandCurl
import Foundation

/// libcurl on its own, through CErrandCurl like ``CurlTransport`` but with nothing of Errand
/// around it, as the floor the `loopback` rows are read against: `bare-curl-easy`, one reused
/// easy handle in a `curl_easy_perform` loop, and `bare-curl-multi`, a ``BareCurlMulti``.
///
/// Each runs on a thread of its own, as ``CurlTransport``'s loop does, and measures like
/// ``Load``: unmeasured warm-up requests first, then wall time, per-request latency and the
/// whole process's CPU time over the measured ones.
enum BareCurl {
    private typealias EasyPerform = @convention(c) (UnsafeMutableRawPointer?) -> Int32

    /// `curl_easy_perform`, which CErrandCurl does not declare, for ``CurlTransport`` drives only
    /// a multi handle: looked up in the very library CErrandCurl loaded (`RTLD_NOLOAD` opens
    /// nothing new), under the names it tries.
    private static func easyPerform() throws(BenchmarkError) -> EasyPerform {
        guard errand_curl_load() == 1 else {
            throw BenchmarkError(description: "libcurl is not available for the bare-libcurl baseline")
        }
        for name in ["libcurl.so.4", "libcurl.so", "libcurl-gnutls.so.4", "libcurl.4.dylib"] {
            guard let library = dlopen(name, RTLD_NOW | RTLD_NOLOAD),
                let symbol = dlsym(library, "curl_easy_perform")
            else { continue }
            return unsafeBitCast(symbol, to: EasyPerform.self)
        }
        throw BenchmarkError(description: "curl_easy_perform is not in the libcurl CErrandCurl loaded")
    }

    /// `total` requests one after another with `curl_easy_perform` on one reused handle.
    static func easy(_ name: String, url: String, total: Int, warmup: Int) async throws -> Measurement {
        try await onThread { () throws(BenchmarkError) -> Measurement in
            let perform = try easyPerform()
            let handle = try BareCurlHandle(url: url)
            let clock = ContinuousClock()
            func once() throws(BenchmarkError) -> Duration {
                let began = clock.now
                let result = perform(handle.easy)
                let elapsed = clock.now - began
                if let failure = handle.failure(result: result) { throw BenchmarkError(description: failure) }
                return elapsed
            }
            for _ in 0..<warmup { _ = try once() }
            var latencies: [Duration] = []
            latencies.reserveCapacity(total)
            let began = clock.now
            let cpuStart = ProcessCPU.now()
            let allocationStart = ProcessAllocations.now()
            for _ in 0..<total { latencies.append(try once()) }
            return Measurement(
                name: name, operations: total, samples: latencies, wall: clock.now - began,
                cpu: ProcessCPU.now() - cpuStart, allocations: ProcessAllocations.since(allocationStart))
        }
    }

    /// `total` requests through one multi handle, `inFlight` at a time.
    static func multi(_ name: String, url: String, total: Int, warmup: Int, inFlight: Int) async throws -> Measurement {
        try await onThread { () throws(BenchmarkError) -> Measurement in
            let multi = try BareCurlMulti(url: url, inFlight: inFlight)
            if warmup > 0 { _ = try multi.run(total: warmup) }
            let clock = ContinuousClock()
            let began = clock.now
            let cpuStart = ProcessCPU.now()
            let allocationStart = ProcessAllocations.now()
            let latencies = try multi.run(total: total)
            return Measurement(
                name: name, operations: total, samples: latencies, wall: clock.now - began,
                cpu: ProcessCPU.now() - cpuStart, allocations: ProcessAllocations.since(allocationStart))
        }
    }

    /// Runs `body` on a new thread, so that its blocking calls hold no thread of the
    /// cooperative pool, and resumes with what it returned or threw.
    private static func onThread(
        _ body: @escaping @Sendable () throws(BenchmarkError) -> Measurement
    ) async throws -> Measurement {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                do {
                    continuation.resume(returning: try body())
                } catch {
                    continuation.resume(throwing: error)
                }
            }
            thread.name = "ErrandBenchmarks.bare-curl"
            thread.start()
        }
    }
}
