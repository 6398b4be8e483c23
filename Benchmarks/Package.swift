// swift-tools-version:6.1
import PackageDescription

// Strata's benchmarks, in their own package so that the library's users never build them.
// Run from this folder: `swift run -c release StrataBenchmarks` (or `make benchmarks` at the root).
let package = Package(
    name: "StrataBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "Strata", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        .executableTarget(
            name: "StrataBenchmarks",
            dependencies: [
                .product(name: "Strata", package: "Strata"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
