// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "Errand",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "Errand", targets: ["Errand"]),
        // The loopback test server, for the packages under Integrations/ and for apps' own tests
        // against a real HTTP server; not part of the library's API promise.
        .library(name: "ErrandTestServer", targets: ["ErrandTestServer"]),
    ],
    dependencies: [],
    targets: [
        .target(name: "Errand", dependencies: ["CErrandCurl", "CErrandZlib", "CErrandPSL"]),
        // Loads libcurl at run time and declares the few functions and constants CurlTransport uses.
        .target(name: "CErrandCurl"),
        // Loads zlib at run time for WebSocket compression (permessage-deflate).
        .target(name: "CErrandZlib"),
        // Loads libpsl at run time for the cookie jar's public suffixes.
        .target(name: "CErrandPSL"),
        // Loopback HTTP and WebSocket server for tests, examples and benchmarks. It takes only SHA-1
        // (for WebSocket accept keys) from Errand.
        .target(name: "ErrandTestServer", dependencies: ["Errand"]),
        // Scenarios shared by the loopback suite and the httpbin interop suite.
        .target(name: "ErrandScenarios", dependencies: ["Errand"], path: "Tests/ErrandScenarios"),
        // Fixtures/ holds files the tests read by path: HTTP Archives other tools wrote; and
        // Documentation/Recordings/ the recording the article on testing replays.
        .testTarget(
            name: "ErrandTests", dependencies: ["Errand", "ErrandTestServer", "ErrandScenarios"],
            exclude: ["Fixtures", "Documentation/Recordings"]),
        // SSEServer/ and ConnectionServer/ hold the Python servers .ci/run starts for the interop suite,
        // HARCheck/ the HTTP Archive checker it runs: not Swift.
        .testTarget(
            name: "ErrandInteropTests", dependencies: ["Errand", "ErrandScenarios"],
            exclude: ["SSEServer", "ConnectionServer", "HARCheck", "WebSocketServer"]),
        // Each example's README.md is for readers, not the build.
        .executableTarget(
            name: "QuickStart", dependencies: ["Errand", "ErrandTestServer"], path: "Examples/QuickStart",
            exclude: ["README.md"]),
        .executableTarget(
            name: "Transfers", dependencies: ["Errand", "ErrandTestServer"], path: "Examples/Transfers",
            exclude: ["README.md"]),
        .executableTarget(
            name: "OfflineAccounts", dependencies: ["Errand", "ErrandTestServer"], path: "Examples/OfflineAccounts",
            exclude: ["README.md"]),
        .executableTarget(
            name: "TokenRefresh", dependencies: ["Errand", "ErrandTestServer"], path: "Examples/TokenRefresh",
            exclude: ["README.md"]),
        .executableTarget(
            name: "SessionCookies", dependencies: ["Errand", "ErrandTestServer"], path: "Examples/SessionCookies",
            exclude: ["README.md"]),
        .executableTarget(
            name: "BatchAndChain", dependencies: ["Errand", "ErrandTestServer"], path: "Examples/BatchAndChain",
            exclude: ["README.md"]),
        .executableTarget(
            name: "StreamingChat", dependencies: ["Errand", "ErrandTestServer"], path: "Examples/StreamingChat",
            exclude: ["README.md"]),
        .executableTarget(
            name: "LiveFeed", dependencies: ["Errand", "ErrandTestServer"], path: "Examples/LiveFeed",
            exclude: ["README.md"]),
        .executableTarget(
            name: "RecordAndReplay", dependencies: ["Errand", "ErrandTestServer"], path: "Examples/RecordAndReplay",
            exclude: ["README.md"]),
        // h2-server.sh starts the local HTTP/2 server the connection benchmarks run against;
        // Peers/ is a package of its own, which compares Errand with other clients (peers.sh runs it).
        .executableTarget(
            name: "ErrandBenchmarks", dependencies: ["Errand", "ErrandTestServer", "CErrandAllocationCounter"],
            path: "Benchmarks",
            exclude: ["h2-server.sh", "alternate.sh", "peers.sh", "README.md", "Peers", "AllocationCounter"]),
        // The benchmarks' heap allocation counter (`--allocations`), linked into them alone.
        .target(name: "CErrandAllocationCounter", path: "Benchmarks/AllocationCounter"),
        // libFuzzer targets for every parser of server- or file-controlled input. Built with
        // -sanitize=fuzzer (Fuzz/run.sh) libFuzzer drives it; built plainly it replays the files
        // given to it, so the seed corpora in Fuzz/Corpus run as a regression check.
        .executableTarget(name: "ErrandFuzz", dependencies: ["Errand"], path: "Fuzz/ErrandFuzz"),
        // The client side of Autobahn|Testsuite, the WebSocket conformance suite (.ci/autobahn).
        .executableTarget(name: "ErrandAutobahn", dependencies: ["Errand"], path: "Tests/AutobahnClient"),
        // The client side of cache-tests.fyi, the HTTP cache conformance suite (.ci/cache-tests).
        .executableTarget(
            name: "ErrandCacheConformance", dependencies: ["Errand"], path: "Tests/CacheConformanceClient",
            exclude: ["errand-fetch.mjs"]),
    ],
    swiftLanguageModes: [.v6]
)
