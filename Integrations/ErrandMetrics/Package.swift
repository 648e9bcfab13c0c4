// swift-tools-version: 6.0
// ErrandMetrics: counts and times every request an agent runs through swift-metrics. A package
// of its own so that Errand itself keeps no dependencies.
import PackageDescription

let package = Package(
    name: "ErrandMetrics",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "ErrandMetrics", targets: ["ErrandMetrics"])
    ],
    dependencies: [
        // Named: a path dependency's identity is otherwise its folder's name, which differs between clones.
        .package(name: "Errand", path: "../.."),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
    ],
    targets: [
        .target(
            name: "ErrandMetrics",
            dependencies: [
                .product(name: "Errand", package: "Errand"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]),
        .testTarget(
            name: "ErrandMetricsTests",
            dependencies: ["ErrandMetrics", .product(name: "MetricsTestKit", package: "swift-metrics")]),
    ],
    swiftLanguageModes: [.v6]
)
