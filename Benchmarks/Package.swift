// swift-tools-version:6.1
import PackageDescription

// Strata's benchmarks, in their own package so that the library's users never build them (nor
// package-benchmark, ordo-one/benchmark, which only this package depends on).
//
//     swift package benchmark                          # every benchmark: percentiles, mallocs
//     swift package benchmark --filter 'OneRowChange'  # a regular expression on the names
//     swift run -c release StrataAims latest           # the aims tables of a stored baseline
//
// `make benchmarks` at the root stores a baseline named `latest` and prints its aims tables.
// package-benchmark runs the executable targets under `Benchmarks/` (its convention).
let package = Package(
    name: "StrataBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "Strata", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        // The malloc interposer gives the allocation counts (jemalloc is not needed).
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "StrataBenchmarks",
            dependencies: [
                .product(name: "Strata", package: "Strata"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/StrataBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // Another process for the cross-process latency benchmarks: it retitles notes and prints
        // when each commit returned.
        .executableTarget(
            name: "StrataHistoryWriter",
            dependencies: [
                .product(name: "Strata", package: "Strata"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Sources/StrataHistoryWriter"
        ),
        // Reads a stored baseline and prints the aims tables: ours beside the baseline of each
        // pair, with the ratio.
        .executableTarget(
            name: "StrataAims",
            dependencies: [.product(name: "Benchmark", package: "benchmark")],
            path: "Sources/StrataAims"
        ),
    ],
    swiftLanguageModes: [.v6]
)
