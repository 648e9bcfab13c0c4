// swift-tools-version: 6.0
// ErrandTracing: a client span for every request an agent runs, through
// swift-distributed-tracing, with the trace context sent on to the server. A package of its own
// so that Errand itself keeps no dependencies.
import PackageDescription

let package = Package(
    name: "ErrandTracing",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "ErrandTracing", targets: ["ErrandTracing"])
    ],
    dependencies: [
        // Named: a path dependency's identity is otherwise its folder's name, which differs between clones.
        .package(name: "Errand", path: "../.."),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
    ],
    targets: [
        .target(
            name: "ErrandTracing",
            dependencies: [
                .product(name: "Errand", package: "Errand"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]),
        .testTarget(
            name: "ErrandTracingTests",
            dependencies: ["ErrandTracing", .product(name: "InMemoryTracing", package: "swift-distributed-tracing")]),
    ],
    swiftLanguageModes: [.v6]
)
