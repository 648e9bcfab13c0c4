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
    ],
    targets: [
        .executableTarget(
            name: "PeerBenchmarks",
            dependencies: [
                .product(name: "Errand", package: "Errand"),
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "WSCompression", package: "swift-websocket"),
            ])
    ],
    swiftLanguageModes: [.v6]
)
