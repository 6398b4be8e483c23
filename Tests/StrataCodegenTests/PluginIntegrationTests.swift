import Foundation
import Testing
import StrataTestSupport

/// Builds a scratch package that uses StrataPlugin, twice: the second build must not run
/// the generator again. The consumer target treats warnings as errors, so generated code
/// that warns fails the test. Slow (it builds GRDB), so opt-in: `STRATA_PLUGIN_TEST=1`
/// (`make test` sets it).
@Suite(.enabled(if: ProcessInfo.processInfo.environment["STRATA_PLUGIN_TEST"] == "1"), .serialized)
struct PluginIntegrationTests {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Runs `swift` with `arguments` in `directory`: a build takes minutes, waited for off the
    /// cooperative pool (see `offThePool`).
    static func swift(_ arguments: [String], in directory: URL) async throws -> (status: Int32, output: String) {
        try await offThePool { try swiftBlocking(arguments, in: directory) }
    }

    static func swiftBlocking(_ arguments: [String], in directory: URL) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swift"] + arguments
        process.currentDirectoryURL = directory
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        return (process.waitForExit().status, String(decoding: data, as: UTF8.self))
    }

    static func makeConsumer() async throws -> URL {
        let directory = try ScratchDirectory.make().appendingPathComponent("Consumer")
        let sources = directory.appendingPathComponent("Sources/Consumer")
        let models = directory.appendingPathComponent("Models")
        try FileManager.default.createDirectory(at: sources, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: models, withIntermediateDirectories: true)
        let identity = packageRoot.lastPathComponent.lowercased()
        try """
            // swift-tools-version:6.1
            import PackageDescription

            let package = Package(
                name: "Consumer",
                platforms: [.macOS(.v13)],
                dependencies: [.package(path: \(literal(packageRoot.path)))],
                targets: [
                    .executableTarget(
                        name: "Consumer",
                        dependencies: [.product(name: "Strata", package: \(literal(identity)))],
                        swiftSettings: [.unsafeFlags(["-warnings-as-errors"])],
                        plugins: [.plugin(name: "StrataPlugin", package: \(literal(identity)))]
                    )
                ],
                swiftLanguageModes: [.v6]
            )

            """.write(to: directory.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)
        try """
            entities:
              Shelf:
                attributes: { label: String }
                relationships:
                  items: { to: Item, many: true, inverse: shelf, deleteRule: cascade }

            """.write(to: models.appendingPathComponent("Shelves.yaml"), atomically: true, encoding: .utf8)
        // An entity named like GRDB's Row, which Strata re-exports: a warning, and the
        // generated code still builds (it writes GRDB.Row).
        try """
            entities:
              Row:
                attributes: { cells: { type: Int, default: 0 } }

            """.write(to: models.appendingPathComponent("Rows.yaml"), atomically: true, encoding: .utf8)
        try """
            enums:
              Size: [small, large]
            entities:
              Item:
                attributes:
                  name: String
                  count: { type: Int, default: 1 }
                  size: { type: Size, default: small }
                  note: { type: String, optional: true }
                relationships:
                  shelf: { to: Shelf, inverse: items }
                  labels: { to: Label, many: true, inverse: items }
                fetches:
                  named: { where: "name BEGINSWITH[c] $prefix AND count >= $minimum", sort: [-count, shelf.label] }
                  labelled: { where: "ANY labels.text == $text OR labels.@count == 0" }
                  bySize: { sections: { key: size }, sort: [name] }
                  byShelf: { sections: { entity: shelf, sort: [label], orphans: true }, sort: [name] }
              Label:
                attributes: { text: String }
                relationships:
                  items: { to: Item, many: true, inverse: labels }

            """.write(to: models.appendingPathComponent("Items.yaml"), atomically: true, encoding: .utf8)
        try """
            import Strata
            let item = Item(name: "Box")
            print(StrataModel.schema.entities.map(\\.name).joined(separator: ","), item.count, Item.shelf.label.path)

            """.write(to: sources.appendingPathComponent("main.swift"), atomically: true, encoding: .utf8)
        // A Swift file of the target with the stem of a model file (Items.yaml): the generated
        // file is named so that both build.
        try """
            extension Item {
                var summary: String { "\\(name) ×\\(count)" }
            }

            """.write(to: sources.appendingPathComponent("Items.swift"), atomically: true, encoding: .utf8)
        return directory
    }

    static func literal(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    static func generatedFiles(in directory: URL) -> [URL: Date] {
        var result: [URL: Date] = [:]
        let enumerator = FileManager.default.enumerator(at: directory.appendingPathComponent(".build/plugins"), includingPropertiesForKeys: [.contentModificationDateKey])
        while let url = enumerator?.nextObject() as? URL {
            guard url.pathExtension == "swift", url.path.contains("GeneratedSources") else { continue }
            result[url] = (try? url.resourceValues(forKeys: [.contentModificationDateKey]))?.contentModificationDate
        }
        return result
    }

    @Test func secondBuildDoesNotRegenerate() async throws {
        let consumer = try await Self.makeConsumer()
        defer { try? FileManager.default.removeItem(at: consumer.deletingLastPathComponent()) }

        let first = try await Self.swift(["build"], in: consumer)
        #expect(first.status == 0, "\(first.output)")
        #expect(first.output.contains("Generating Strata model code for Consumer"), "\(first.output)")
        #expect(
            first.output.contains("Models/Rows.yaml:2:3: warning: entity 'Row' hides GRDB.Row in the code of the target that generates it"),
            "\(first.output)")
        let generated = Self.generatedFiles(in: consumer)
        #expect(Set(generated.keys.map(\.lastPathComponent)) == ["Items.strata.swift", "Rows.strata.swift", "Shelves.strata.swift", "StrataModel+Schema.strata.swift"])

        // A no-op build: SwiftPM may relink the tool (an input of the command) and so run the
        // generator again, but the generator must rewrite nothing, so nothing recompiles.
        let second = try await Self.swift(["build"], in: consumer)
        #expect(second.status == 0, "\(second.output)")
        #expect(Self.generatedFiles(in: consumer) == generated, "generated files were rewritten")
        #expect(!second.output.contains("Compiling Consumer"), "the consumer was recompiled:\n\(second.output)")
        let third = try await Self.swift(["build"], in: consumer)
        #expect(third.status == 0, "\(third.output)")
        #expect(Self.generatedFiles(in: consumer) == generated, "generated files were rewritten")
        if second.output.contains("Generating Strata model code") {
            print("note: SwiftPM ran the generator on a no-op build (it relinked the tool); outputs were untouched")
        }

        let run = try await Self.swift(["run", "--skip-build", "Consumer"], in: consumer)
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("Item,Label,Row,Shelf 1 [\"shelf\", \"label\"]"), "\(run.output)")

        // A model file added: its code is generated and compiled on the next build once
        // SwiftPM runs the plugin again. SwiftPM caches the plugin's commands and re-runs the
        // plugin when the package or the target's own files change, not when a file appears
        // in the package-level Models folder, hence the touched manifest (see the README).
        // Without it, the build fails with the generator's word for it (the folder is an input
        // of the command), not with the compiler's "cannot find 'Bin' in scope".
        let models = consumer.appendingPathComponent("Models")
        let extra = models.appendingPathComponent("Extra.yaml")
        try "entities:\n  Bin:\n    attributes: { size: String }\n".write(to: extra, atomically: true, encoding: .utf8)
        let unplanned = try await Self.swift(["build"], in: consumer)
        #expect(unplanned.status != 0)
        #expect(unplanned.output.contains("error: 'Extra.yaml' was added in"), "\(unplanned.output)")
        #expect(unplanned.output.contains("change Package.swift (a comment will do) and build again"), "\(unplanned.output)")
        let manifestURL = consumer.appendingPathComponent("Package.swift")
        try (String(contentsOf: manifestURL, encoding: .utf8) + "// Extra.yaml added\n").write(
            to: manifestURL, atomically: true, encoding: .utf8)
        let added = try await Self.swift(["build"], in: consumer)
        #expect(added.status == 0, "\(added.output)")
        #expect(
            Set(Self.generatedFiles(in: consumer).keys.map(\.lastPathComponent))
                == ["Extra.strata.swift", "Items.strata.swift", "Rows.strata.swift", "Shelves.strata.swift", "StrataModel+Schema.strata.swift"])
        let rerun = try await Self.swift(["run", "--skip-build", "Consumer"], in: consumer)
        #expect(rerun.output.contains("Bin,Item,Label,Row,Shelf 1"), "\(rerun.output)")

        // A mistake in the model fails the build with the model's position and a suggestion.
        try "entities:\n  Bin:\n    attributes: { size: Strnig }\n".write(to: extra, atomically: true, encoding: .utf8)
        let mistaken = try await Self.swift(["build"], in: consumer)
        #expect(mistaken.status != 0)
        #expect(
            mistaken.output.contains("Models/Extra.yaml:3:25: error: unknown type 'Strnig' for attribute 'Bin.size'; did you mean 'String'?"),
            "\(mistaken.output)")

        // A target's own Models folder takes the place of the package's (Item goes, and the
        // file that extends it with it).
        try FileManager.default.removeItem(at: consumer.appendingPathComponent("Sources/Consumer/Items.swift"))
        let own = consumer.appendingPathComponent("Sources/Consumer/Models")
        try FileManager.default.createDirectory(at: own, withIntermediateDirectories: true)
        try "entities:\n  Crate:\n    attributes: { code: Int }\n".write(
            to: own.appendingPathComponent("Crates.yaml"), atomically: true, encoding: .utf8)
        try "import Strata\nprint(StrataModel.schema.entities.map(\\.name), Crate(code: 7).code)\n".write(
            to: consumer.appendingPathComponent("Sources/Consumer/main.swift"), atomically: true, encoding: .utf8)
        try (String(contentsOf: manifestURL, encoding: .utf8) + "// own models\n").write(
            to: manifestURL, atomically: true, encoding: .utf8)
        let ownBuild = try await Self.swift(["build"], in: consumer)
        #expect(ownBuild.status == 0, "\(ownBuild.output)")
        let ownRun = try await Self.swift(["run", "--skip-build", "Consumer"], in: consumer)
        #expect(ownRun.output.contains("[\"Crate\"] 7"), "\(ownRun.output)")
        try FileManager.default.removeItem(at: own)

        // Without a Models folder, the plugin's error says what to do.
        // (The manifest changes too, so that SwiftPM runs the plugin again instead of reusing
        // its cached commands.)
        try FileManager.default.removeItem(at: consumer.appendingPathComponent("Models"))
        let manifest = consumer.appendingPathComponent("Package.swift")
        try (String(contentsOf: manifest, encoding: .utf8) + "// no model\n").write(to: manifest, atomically: true, encoding: .utf8)
        let broken = try await Self.swift(["build"], in: consumer)
        #expect(broken.status != 0)
        #expect(broken.output.contains("StrataPlugin: target 'Consumer' has no model. Create"), "\(broken.output)")
    }
}
