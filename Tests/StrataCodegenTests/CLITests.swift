import Foundation
import StrataCodegen
import StrataTestSupport
import Testing

/// Runs the built `strata` executable and checks exit codes, stderr and the files it writes.
@Suite struct CLITests {
    typealias Run = StrataCLI.Run

    static func strata(_ arguments: [String], in directory: URL? = nil) async throws -> Run {
        try await StrataCLI.run(CLIExecutable.url(), arguments, in: directory)
    }

    /// One row per bad invocation: the arguments, the exit code, and a line stderr must hold.
    static let argumentErrors: [(arguments: [String], status: Int32, message: String)] = [
        (["generate"], 64, "Error: Missing expected argument '--output <output>'"),
        (["generate", "--output", "out"], 64, "Error: Missing model files: give one or more *.yaml files or directories."),
        (["generate", "--output", "out", "--model-name", "9Model", "Models"], 64,
         "Error: '--model-name 9Model' is not a Swift identifier: use letters, digits and '_', not starting with a digit."),
        (["generate", "--output", "out", "--bogus", "Models"], 64, "Error: Unknown option '--bogus'"),
        (["frobnicate"], 64, "Error: Unexpected argument 'frobnicate'"),
        (["validate"], 64, "Error: Missing model files: give one or more *.yaml files or directories."),
        (["validate", "missing.yaml"], 1, "error: cannot read model file 'missing.yaml'"),
        (["validate", "Empty"], 1, "error: no model files (*.yaml, *.yml) in 'Empty'"),
        (["diagram", "--model-name", "a-b", "Models"], 64,
         "Error: '--model-name a-b' is not a Swift identifier: use letters, digits and '_', not starting with a digit."),
    ]

    @Test(arguments: argumentErrors.indices)
    func argumentError(row: Int) async throws {
        let (arguments, status, message) = Self.argumentErrors[row]
        let directory = try ScratchDirectory.make()
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("Empty"), withIntermediateDirectories: true)
        let run = try await Self.strata(arguments, in: directory)
        #expect(run.status == status, "\(arguments): \(run.stderr)")
        #expect(run.stderr.split(separator: "\n").contains { $0 == message }, "\(arguments): stderr was\n\(run.stderr)")
    }

    @Test func validateSaysWhatAValidModelHolds() async throws {
        let directory = try ScratchDirectory.make()
        let models = directory.appendingPathComponent("Models")
        try FileManager.default.createDirectory(at: models, withIntermediateDirectories: true)
        try "enums:\n  Color: [red, blue]\nentities:\n  Tag:\n    attributes: { name: String, color: Color }\n    fetches: { all: { sort: [name] } }\n".write(
            to: models.appendingPathComponent("Tags.yaml"), atomically: true, encoding: .utf8)
        try "entities:\n  Label:\n    attributes: { text: String }\n".write(
            to: models.appendingPathComponent("Labels.yaml"), atomically: true, encoding: .utf8)
        let run = try await Self.strata(["validate", "Models"], in: directory)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "2 model files, 2 entities, 1 enum, 1 fetch: valid (no errors, no warnings)\n")
        #expect(run.stderr.isEmpty, "\(run.stderr)")
    }

    /// What the build plugin meets when a model file is added after SwiftPM planned the
    /// build: the folder holds a file the command was not given.
    @Test func generateSaysWhenTheModelsFolderChangedAfterThePlan() async throws {
        let directory = try ScratchDirectory.make()
        let models = directory.appendingPathComponent("Models")
        try FileManager.default.createDirectory(at: models, withIntermediateDirectories: true)
        try "entities:\n  Tag:\n    attributes: { name: String }\n".write(
            to: models.appendingPathComponent("Tags.yaml"), atomically: true, encoding: .utf8)
        let planned = try await Self.strata(["generate", "--output", "Out", "--models-folder", "Models", "Models/Tags.yaml"], in: directory)
        #expect(planned.status == 0, "\(planned.stderr)")
        try "entities:\n  Cookbook:\n    attributes: { title: String }\n".write(
            to: models.appendingPathComponent("Cookbook.yaml"), atomically: true, encoding: .utf8)
        let added = try await Self.strata(["generate", "--output", "Out", "--models-folder", "Models", "Models/Tags.yaml"], in: directory)
        #expect(added.status == 1)
        #expect(added.stderr.hasPrefix("error: 'Cookbook.yaml' was added in 'Models' after SwiftPM planned this build"), "\(added.stderr)")
        #expect(added.stderr.contains("change Package.swift (a comment will do) and build again"), "\(added.stderr)")
        try FileManager.default.removeItem(at: models.appendingPathComponent("Tags.yaml"))
        let removed = try await Self.strata(
            ["generate", "--output", "Out", "--models-folder", "Models", "Models/Tags.yaml", "Models/Cookbook.yaml"], in: directory)
        #expect(removed.status == 1)
        #expect(removed.stderr.hasPrefix("error: 'Tags.yaml' was removed in 'Models'"), "\(removed.stderr)")
        // Without the option (a user's own call), the files given are the model.
        let chosen = try await Self.strata(["generate", "--output", "Out", "Models/Cookbook.yaml"], in: directory)
        #expect(chosen.status == 0, "\(chosen.stderr)")
    }

    @Test func modelErrorsAreCompilerStyleWithNonZeroExit() async throws {
        let directory = try ScratchDirectory.make()
        try "entities:\n  Note:\n    attributes: { title: Strnig }\n".write(
            to: directory.appendingPathComponent("Bad.yaml"), atomically: true, encoding: .utf8)
        let run = try await Self.strata(["validate", "Bad.yaml"], in: directory)
        #expect(run.status == 1)
        #expect(run.stderr.hasPrefix("Bad.yaml:3:"), "\(run.stderr)")
        #expect(run.stderr.contains(": error: "), "\(run.stderr)")
    }

    @Test func generateWritesOnlyChangedFiles() async throws {
        let directory = try ScratchDirectory.make()
        let models = directory.appendingPathComponent("Models")
        try FileManager.default.createDirectory(at: models, withIntermediateDirectories: true)
        try "entities:\n  Tag:\n    attributes: { name: String }\n".write(
            to: models.appendingPathComponent("Tags.yaml"), atomically: true, encoding: .utf8)
        try "entities:\n  Label:\n    attributes: { text: String }\n".write(
            to: models.appendingPathComponent("Labels.yml"), atomically: true, encoding: .utf8)

        let first = try await Self.strata(["generate", "--output", "Out", "--model-name", "Tagging", "Models"], in: directory)
        #expect(first.status == 0, "\(first.stderr)")
        let out = directory.appendingPathComponent("Out")
        let names = try FileManager.default.contentsOfDirectory(atPath: out.path).sorted()
        #expect(names == ["Labels.strata.swift", "Tagging+Schema.strata.swift", "Tags.strata.swift"])

        // Age the files, run again: nothing may be rewritten.
        let old = Date(timeIntervalSince1970: 1_000_000)
        for name in names {
            try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: out.appendingPathComponent(name).path)
        }
        let second = try await Self.strata(["generate", "--output", "Out", "--model-name", "Tagging", "Models"], in: directory)
        #expect(second.status == 0, "\(second.stderr)")
        for name in names {
            let date = try FileManager.default.attributesOfItem(atPath: out.appendingPathComponent(name).path)[.modificationDate] as? Date
            #expect(date == old, "\(name) was rewritten")
        }

        // Change one model file: only its output changes.
        try "entities:\n  Tag:\n    attributes: { name: String, color: { type: String, optional: true } }\n".write(
            to: models.appendingPathComponent("Tags.yaml"), atomically: true, encoding: .utf8)
        let third = try await Self.strata(["generate", "--output", "Out", "--model-name", "Tagging", "Models"], in: directory)
        #expect(third.status == 0, "\(third.stderr)")
        let changed = try names.filter { name in
            try FileManager.default.attributesOfItem(atPath: out.appendingPathComponent(name).path)[.modificationDate] as? Date != old
        }
        #expect(changed == ["Tagging+Schema.strata.swift", "Tags.strata.swift"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).sorted() == names, "no temporary file left")

        // Rename a model file: its old output goes, other Swift files stay.
        try FileManager.default.moveItem(at: models.appendingPathComponent("Labels.yml"), to: models.appendingPathComponent("Markers.yaml"))
        try "// mine\n".write(to: out.appendingPathComponent("Mine.swift"), atomically: true, encoding: .utf8)
        let fourth = try await Self.strata(["generate", "--output", "Out", "--model-name", "Tagging", "Models"], in: directory)
        #expect(fourth.status == 0, "\(fourth.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).sorted()
            == ["Markers.strata.swift", "Mine.swift", "Tagging+Schema.strata.swift", "Tags.strata.swift"])
    }

    /// Code checked in from an earlier version (`strata-generate`) is named `<stem>.swift`:
    /// generating again removes those files (they start with the generator's header), so
    /// nothing is declared twice, and leaves the target's own files of those names.
    @Test func generateRemovesFilesNamedTheEarlierWay() async throws {
        let directory = try ScratchDirectory.make()
        let models = directory.appendingPathComponent("Models")
        let out = directory.appendingPathComponent("Out")
        try FileManager.default.createDirectory(at: models, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        try "entities:\n  Tag:\n    attributes: { name: String }\n".write(
            to: models.appendingPathComponent("Tags.yaml"), atomically: true, encoding: .utf8)
        let header = Generator.header(modelName: "Tagging")
        for name in ["Tags.swift", "Tagging+Schema.swift"] {
            try (header + "\n// as generated before\n").write(to: out.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        try "extension Tag {}\n".write(to: out.appendingPathComponent("Tagging.swift"), atomically: true, encoding: .utf8)

        let run = try await Self.strata(["generate", "--output", "Out", "--model-name", "Tagging", "Models"], in: directory)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out.path).sorted()
            == ["Tagging+Schema.strata.swift", "Tagging.swift", "Tags.strata.swift"])
    }

    @Test func diagramAndJSONSchema() async throws {
        let directory = try ScratchDirectory.make()
        try "entities:\n  Tag:\n    attributes: { name: String }\n".write(
            to: directory.appendingPathComponent("Tags.yaml"), atomically: true, encoding: .utf8)
        let diagram = try await Self.strata(["diagram", "Tags.yaml"], in: directory)
        #expect(diagram.status == 0, "\(diagram.stderr)")
        #expect(diagram.stdout == "erDiagram\n    Tag {\n        Int id PK\n        String name\n    }\n")

        let schema = try await Self.strata(["json-schema"])
        #expect(schema.status == 0)
        let object = try JSONSerialization.jsonObject(with: Data(schema.stdout.utf8)) as? [String: Any]
        #expect(object?["$schema"] as? String == "https://json-schema.org/draft/2020-12/schema")
    }
}

enum CLIExecutable {
    /// The `strata` executable next to the test bundle, in the build's products folder.
    static func url() throws -> URL { try StrataCLI.executable(besideBundle: Bundle.module.bundleURL) }
}

enum ScratchDirectory {
    static func make() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("strata-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
