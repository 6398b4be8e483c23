// swift-tools-version:6.1
// (Models/ holds Notes.yaml, Tags.yaml and Todos.yaml; see README on adding model files.)
import PackageDescription

let package = Package(
    name: "Strata",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "Strata", targets: ["Strata"]),
        .library(name: "StrataSchema", targets: ["StrataSchema"]),
        .library(name: "StrataCodegen", targets: ["StrataCodegen"]),
        .executable(name: "strata", targets: ["strata"]),
        .plugin(name: "StrataPlugin", targets: ["StrataPlugin"]),
        .plugin(name: "StrataGenerate", targets: ["StrataGenerate"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
    ],
    targets: [
        // libyaml, as a system library: a module map and a shim header.
        .systemLibrary(
            name: "CYAML",
            pkgConfig: "yaml-0.1",
            providers: [.apt(["libyaml-dev"]), .brew(["libyaml"])]
        ),
        // YAML → Schema → validation, and the predicate language.
        .target(name: "StrataSchema", dependencies: ["CYAML"]),
        // Schema → Swift source files.
        .target(name: "StrataCodegen", dependencies: ["StrataSchema"]),
        // The command-line tool the build plugin runs.
        .executableTarget(
            name: "strata",
            dependencies: [
                "StrataSchema", "StrataCodegen",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Both plugins compile Plugins/PluginsShared/, linked into their folders: the models
        // folder lookup, and the generator's own OutputNaming.swift (plugins cannot import it).
        .plugin(name: "StrataPlugin", capability: .buildTool(), dependencies: ["strata"]),
        // `swift package strata-generate`: writes generated code into the package, to check it in.
        .plugin(
            name: "StrataGenerate",
            capability: .command(
                intent: .custom(verb: "strata-generate", description: "Generate Swift code from the Strata model into the package"),
                permissions: [.writeToPackageDirectory(reason: "Writes the generated model code into the target's folder")]
            ),
            dependencies: ["strata"]
        ),
        // The runtime: store, predicates, fetch requests, live sectioned results.
        .target(
            name: "Strata",
            dependencies: [
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "OrderedCollections", package: "swift-collections"),
            ]),
        // The README's main job, on the package's own Models/.
        .executableTarget(name: "StrataDemo", dependencies: ["StrataDemoKit"]),
        // The demo's scenario, interactive shell and renderer, generated model included.
        .target(name: "StrataDemoKit", dependencies: ["Strata"], plugins: ["StrataPlugin"]),

        .testTarget(
            name: "StrataSchemaTests",
            dependencies: ["StrataSchema"],
            resources: [.copy("Resources")]
        ),
        .testTarget(
            name: "StrataCodegenTests",
            dependencies: ["StrataSchema", "StrataCodegen", "strata"],
            resources: [.copy("Resources")]
        ),
        // Compiles and exercises the reference output of StrataCodegenTests (symlinked sources).
        .testTarget(
            name: "StrataGeneratedTests",
            dependencies: ["Strata", .product(name: "GRDB", package: "GRDB.swift")]
        ),
        .testTarget(
            name: "StrataTests",
            // SQLite's C API, for the fault-injecting file system of the fault-injection tests.
            dependencies: ["Strata", .product(name: "GRDBSQLite", package: "GRDB.swift")]),
        .testTarget(name: "StrataDemoTests", dependencies: ["StrataDemoKit"], exclude: ["Reference"]),
    ],
    swiftLanguageModes: [.v6]
)
