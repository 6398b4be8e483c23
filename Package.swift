// swift-tools-version:6.1
// (Models/ holds Notes.yaml, Tags.yaml and Todos.yaml; see README on adding model files.)
import PackageDescription

let package = Package(
    name: "Strata",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "Strata", targets: ["Strata"]),
        .library(name: "StrataSync", targets: ["StrataSync"]),
        .library(name: "StrataSchema", targets: ["StrataSchema"]),
        .library(name: "StrataCodegen", targets: ["StrataCodegen"]),
        .library(name: "StrataRelay", targets: ["StrataRelay"]),
        .executable(name: "strata", targets: ["strata"]),
        .executable(name: "strata-relay", targets: ["strata-relay"]),
        .plugin(name: "StrataPlugin", targets: ["StrataPlugin"]),
        .plugin(name: "StrataGenerate", targets: ["StrataGenerate"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // The relay (StrataRelay, strata-relay): the HTTP server, without its default traits
        // (swift-configuration, which the relay does not use), and the JWTs of sign-in.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.0.0"),
        // The relay's metrics: the API (StrataRelay records, whoever mounts it bootstraps), and
        // the Prometheus backend that strata-relay bootstraps and serves at /metrics.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // strata-relay's settings: a JSON file and the environment, through swift-configuration.
        .package(url: "https://github.com/apple/swift-configuration", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.4.0"),
        // A relay's device side on Linux: HTTP over SwiftNIO (StrataSync links NIO already).
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
    ],
    targets: [
        // libyaml, as a system library: a module map and a shim header.
        .systemLibrary(
            name: "CYAML",
            pkgConfig: "yaml-0.1",
            providers: [.apt(["libyaml-dev"]), .brew(["libyaml"])]
        ),
        // YAML → Schema → validation, and the predicate language.
        .target(name: "StrataSchema", dependencies: ["CYAML", "StrataSQL"]),
        // Schema → Swift source files.
        .target(name: "StrataCodegen", dependencies: ["StrataSchema"]),
        // A sync server's DDL from a neutral description of its tables (no dependencies):
        // shared by StrataSync (from the runtime's descriptor) and `strata sql` (from the YAML).
        .target(name: "StrataSQL"),
        // The command-line tool the build plugin runs.
        .executableTarget(
            name: "strata",
            dependencies: [
                "StrataSchema", "StrataCodegen", "StrataSQL",
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
                // SQLite's own API, to read a results fetch's columns by position.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "OrderedCollections", package: "swift-collections"),
                // `CivilDate`: the calendar arithmetic of stored dates, shared with the schema.
                "StrataSQL",
            ]),
        // Sync of stores through a PostgreSQL server (its own product, so that apps without
        // sync do not link SwiftNIO).
        .target(
            name: "StrataSync",
            dependencies: [
                "Strata", "StrataSQL", .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"), .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]),
        // The relay: the sync exchange over HTTP for devices without database credentials
        // (its own product: StrataSync's users do not build Hummingbird), sign-in by JWT, and
        // the model read from its YAML files at run time.
        .target(
            name: "StrataRelay",
            dependencies: [
                "StrataSync", "StrataSchema", .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"), .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"), .product(name: "Metrics", package: "swift-metrics"),
            ]),
        // The relay as a program: configured by the environment (or a JSON file), it serves a
        // model's YAML files.
        .executableTarget(
            name: "strata-relay",
            dependencies: [
                "StrataRelay", .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"), .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"), .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]),
        // `make relay-demo`: two users on three devices, sharing a board, syncing through
        // strata-relay (a process) and a private PostgreSQL cluster, signed in with tokens.
        .executableTarget(
            name: "StrataRelayDemo",
            dependencies: ["StrataSyncFixture", "StrataSharingFixture", .product(name: "JWTKit", package: "jwt-kit")]),
        // `make sync-demo`: two stores syncing through a private PostgreSQL cluster.
        .executableTarget(name: "StrataSyncDemo", dependencies: ["StrataSyncFixture"]),
        // The README's main job, on the package's own Models/.
        .executableTarget(name: "StrataDemo", dependencies: ["StrataDemoKit"]),
        // A command-line tool the tests run as a child process (FirstUseTests).
        .executableTarget(
            name: "StrataMainThreadProbe", dependencies: ["Strata"], path: "Tests/MainThreadProbe",
            exclude: ["Models"], plugins: ["StrataPlugin"]),
        // The Swift of the README and the DocC articles, compiled as users write it, warnings as
        // errors (DocSnippetTests checks that every ```swift block of the docs is here, line
        // for line): the article "Your first app", a program on its own model that the tests
        // run; the README's tour and the articles' snippets, on the package's Models/ (the
        // README's store code at top level, in main.swift); the sync quick start.
        .executableTarget(
            name: "StrataFirstApp", dependencies: ["Strata"], path: "Tests/DocSnippets/FirstApp",
            exclude: ["Models"], swiftSettings: [.unsafeFlags(["-warnings-as-errors"])], plugins: ["StrataPlugin"]),
        .executableTarget(
            name: "StrataDocSnippets", dependencies: ["Strata"], path: "Tests/DocSnippets/Articles",
            swiftSettings: [.unsafeFlags(["-warnings-as-errors"])], plugins: ["StrataPlugin"]),
        .executableTarget(
            name: "StrataSyncQuickStart",
            dependencies: ["StrataSync", .product(name: "PostgresNIO", package: "postgres-nio")],
            path: "Tests/DocSnippets/SyncQuickStart",
            swiftSettings: [.unsafeFlags(["-warnings-as-errors"])], plugins: ["StrataPlugin"]),
        // The snippets of the article "Sync for apps: the relay" (the device's side and a
        // relay mounted in a Hummingbird app).
        .target(
            name: "StrataRelaySnippets",
            dependencies: [
                "StrataRelay", .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "Tests/DocSnippets/Relay", swiftSettings: [.unsafeFlags(["-warnings-as-errors"])]),
        // The demo's scenario, interactive shell and renderer, generated model included.
        .target(name: "StrataDemoKit", dependencies: ["Strata"], plugins: ["StrataPlugin"]),

        // What the test targets share: the seeded generator, temporary folders, the strata CLI
        // runner, waits off the cooperative pool and child processes reaped by hand, the
        // recorder of a controller's deliveries and the list that replays its batches, and the
        // JSON Schema validator (of JSON values, read from JSON or from YAML: StrataSchema's).
        .target(name: "StrataTestSupport", dependencies: ["Strata", "StrataSchema"], path: "Tests/StrataTestSupport"),
        .testTarget(
            name: "StrataSchemaTests",
            dependencies: ["StrataSchema", "StrataTestSupport"],
            resources: [.copy("Resources")]
        ),
        .testTarget(
            name: "StrataCodegenTests",
            dependencies: ["StrataSchema", "StrataCodegen", "strata", "StrataTestSupport"],
            resources: [.copy("Resources")]
        ),
        // Compiles and exercises the reference output of StrataCodegenTests (symlinked sources).
        .testTarget(
            name: "StrataGeneratedTests",
            dependencies: [
                "Strata", "StrataTestSupport", .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // Compiles the reference output for a model whose entities are named like GRDB's,
        // Strata's and Foundation's types (symlinked sources), as an app's target would.
        .testTarget(name: "StrataShadowedNamesTests", dependencies: ["Strata"]),
        .testTarget(
            name: "StrataTests",
            // SQLite's C API, for the fault-injecting file system of the fault-injection tests.
            dependencies: [
                "Strata", "StrataTestSupport", "StrataSQL", .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]),
        // The sync tests' model, shared by the tests and the device processes they start.
        .target(name: "StrataSyncFixture", dependencies: [
                    "StrataSync", "StrataTestSupport", .product(name: "PostgresNIO", package: "postgres-nio"),
                ], path: "Tests/SyncFixture",
                exclude: ["Models"], plugins: ["StrataPlugin"]),
        // The model of the relay's per-user data tests and of `make relay-demo`: boards shared
        // with members, their cards and comments, private notes, labels for everyone.
        .target(
            name: "StrataSharingFixture", dependencies: ["StrataSync"], path: "Tests/SharingFixture",
            exclude: ["Models"], plugins: ["StrataPlugin"]),
        // One device of the multi-device tests and of `make sync-demo`: a process with its own
        // store file, driven by lines on standard input.
        .executableTarget(
            name: "StrataSyncDevice",
            dependencies: ["StrataSyncFixture", "StrataTestSupport", .product(name: "Logging", package: "swift-log")],
            path: "Tests/SyncDevice"),
        // Also runs `strata sql` (hence "strata"), and compares it with the reference
        // descriptors of StrataCodegenTests (symlinked sources, which import GRDB).
        .testTarget(
            name: "StrataSyncTests",
            dependencies: [
                "StrataSyncFixture", "StrataTestSupport", "StrataSQL", "strata", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // The relay as a process (strata-relay, built beside this bundle) between devices and
        // a private cluster, and mounted in an app of the test's; tokens signed here. Also
        // compares the descriptors the relay makes from YAML with the reference descriptors of
        // StrataCodegenTests (symlinked sources).
        .testTarget(
            name: "StrataRelayTests",
            dependencies: [
                "StrataSyncFixture", "StrataSharingFixture", "StrataTestSupport", "StrataRelay", "strata-relay",
                .product(name: "JWTKit", package: "jwt-kit"), .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Hummingbird", package: "hummingbird"), .product(name: "PostgresNIO", package: "postgres-nio"),
            ]),
        .testTarget(name: "StrataDemoTests", dependencies: ["StrataDemoKit", "StrataTestSupport"], exclude: ["Reference"]),

        // The model corpus: four apps' models (Tests/Corpus/<App>/Models), each generated by the
        // build plugin as a user's target would be, compiled, and exercised on real store files.
        .target(name: "CorpusFinance", dependencies: ["Strata"], path: "Tests/Corpus/Finance", plugins: ["StrataPlugin"]),
        .target(name: "CorpusTasks", dependencies: ["Strata"], path: "Tests/Corpus/Tasks", plugins: ["StrataPlugin"]),
        .target(name: "CorpusPhotos", dependencies: ["Strata"], path: "Tests/Corpus/Photos", plugins: ["StrataPlugin"]),
        .target(name: "CorpusMessaging", dependencies: ["Strata"], path: "Tests/Corpus/Messaging", plugins: ["StrataPlugin"]),
        .testTarget(
            name: "StrataCorpusTests",
            dependencies: [
                "Strata", "StrataTestSupport", "CorpusFinance", "CorpusTasks", "CorpusPhotos", "CorpusMessaging",
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
