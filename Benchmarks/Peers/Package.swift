// swift-tools-version: 6.0
// Errand beside other Swift clients in one process, against one server, in the same run: numbers
// measured on different days or machines are no comparison. A package of its own, so that the
// root package keeps no dependencies; nothing here is built by CI.
import PackageDescription

let package = Package(
    name: "ErrandPeers",
    platforms: [.macOS(.v14), .iOS(.v17)],
    dependencies: [
        .package(name: "Errand", path: "../.."),
        .package(url: "https://github.com/hummingbird-project/swift-websocket.git", exact: "1.6.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        // Named for the modules imported directly (the event loop group, ByteBuffer, the no-op logger).
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.100.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        // For the trust roots of the HTTP/2-over-TLS rows.
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.27.0"),
    ],
    targets: [
        .executableTarget(
            name: "PeerBenchmarks",
            dependencies: [
                .product(name: "Errand", package: "Errand"),
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "WSCompression", package: "swift-websocket"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ])
    ],
    swiftLanguageModes: [.v6]
)
