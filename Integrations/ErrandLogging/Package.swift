// swift-tools-version: 6.0
// ErrandLogging: every request an agent runs, logged through swift-log. A package of its own so
// that Errand itself keeps no dependencies.
import PackageDescription

let package = Package(
    name: "ErrandLogging",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "ErrandLogging", targets: ["ErrandLogging"])
    ],
    dependencies: [
        // Named: a path dependency's identity is otherwise its folder's name, which differs between clones.
        .package(name: "Errand", path: "../.."),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    ],
    targets: [
        .target(
            name: "ErrandLogging",
            dependencies: [
                .product(name: "Errand", package: "Errand"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(name: "ErrandLoggingTests", dependencies: ["ErrandLogging"]),
    ],
    swiftLanguageModes: [.v6]
)
