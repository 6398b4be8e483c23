import ArgumentParser
import Foundation
import StrataCodegen
import StrataSchema

/// `strata`: generates Swift from a Strata model, validates it, draws it, describes the language.
@main
struct StrataCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata",
        abstract: "Generate typed Swift code from a Strata model (YAML), check it, draw it, or write its sync server's SQL.",
        subcommands: [Generate.self, Validate.self, Diagram.self, SQLCommand.self, JSONSchemaCommand.self]
    )
}

/// The model files or directories of a command, and the model name.
struct ModelOptions: ParsableArguments {
    @Option(name: .long, help: "The model's name: the Swift namespace of its schema descriptor.")
    var modelName: String = "StrataModel"

    @Argument(help: "Model files (*.yaml, *.yml) or directories holding them.")
    var models: [String] = []

    func validate() throws {
        if models.isEmpty {
            throw ValidationError("Missing model files: give one or more *.yaml files or directories.")
        }
        if !isSwiftIdentifier(modelName) {
            throw ValidationError("'--model-name \(modelName)' is not a Swift identifier: use letters, digits and '_', not starting with a digit.")
        }
    }

    /// Loads the model, printing its diagnostics; nil when it has errors.
    func load() throws -> (schema: Schema, files: [String]) {
        let (schema, files, _) = try loadCountingWarnings()
        return (schema, files)
    }

    /// ``load()``, with the number of warnings it printed.
    func loadCountingWarnings() throws -> (schema: Schema, files: [String], warnings: Int) {
        let files = models.flatMap(SchemaPipeline.expand)
        if files.isEmpty {
            printDiagnostics([.error("no model files (*.yaml, *.yml) in \(models.map { "'\($0)'" }.joined(separator: ", "))", at: nil)])
            throw ExitCode.failure
        }
        let result = SchemaPipeline.load(paths: models, modelName: modelName)
        printDiagnostics(result.diagnostics)
        guard let schema = result.schema, !result.hasErrors else { throw ExitCode.failure }
        return (schema, files, result.diagnostics.filter { $0.severity == .warning }.count)
    }
}

func isSwiftIdentifier(_ text: String) -> Bool {
    guard let first = text.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
    return text.unicodeScalars.allSatisfy { $0 == "_" || $0.properties.isAlphabetic || ("0"..."9").contains($0) }
}

func printDiagnostics(_ diagnostics: [Diagnostic]) {
    for diagnostic in diagnostics {
        FileHandle.standardError.write(Data((diagnostic.description + "\n").utf8))
    }
}

struct Generate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Generate Swift files: one per model file (<stem>.strata.swift), plus <ModelName>+Schema.strata.swift.",
        discussion: "A file is written only when its bytes change, so a build that changes nothing recompiles nothing."
    )

    @Option(name: .long, help: "The directory to write the generated files to (created if missing).")
    var output: String

    @Option(
        name: .long,
        help: "The folder the model files were listed from (the build plugin passes it): a model file there that is not among the files given fails the run, saying what to do.")
    var modelsFolder: String?

    @OptionGroup var model: ModelOptions

    func run() throws {
        if let modelsFolder, let message = Self.unplannedFiles(in: modelsFolder, given: model.models) {
            printDiagnostics([.error(message, at: nil)])
            throw ExitCode.failure
        }
        let (schema, files) = try model.load()
        let generated: [GeneratedFile]
        do {
            generated = try Generator.generate(schema, modelFiles: files)
        } catch let error as SchemaError {
            printDiagnostics(error.diagnostics)
            throw ExitCode.failure
        }
        do {
            let directory = URL(fileURLWithPath: output, isDirectory: true)
            try FileOutput.write(generated, to: directory)
            try FileOutput.removeStale(
                in: directory, keep: Set(generated.map(\.name)), header: Generator.header(modelName: schema.name))
        } catch {
            printDiagnostics([.error("cannot write to '\(output)': \(error.localizedDescription)", at: nil)])
            throw ExitCode.failure
        }
    }
}

extension Generate {
    /// What to say when `folder` holds model files that are not among `given`, or `given`
    /// names files that are gone: SwiftPM planned the build (the plugin's list of files)
    /// before the folder changed, and keeps that plan until `Package.swift` changes.
    static func unplannedFiles(in folder: String, given: [String]) -> String? {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        let present = Set(names.filter { !$0.hasPrefix(".") && ($0.hasSuffix(".yaml") || $0.hasSuffix(".yml")) }
            .map { URL(fileURLWithPath: folder).appendingPathComponent($0).standardizedFileURL.path })
        let planned = Set(given.map { URL(fileURLWithPath: $0).standardizedFileURL.path })
        let added = present.subtracting(planned).sorted(), removed = planned.subtracting(present).sorted()
        if added.isEmpty && removed.isEmpty { return nil }
        func list(_ paths: [String]) -> String {
            paths.map { "'\(URL(fileURLWithPath: $0).lastPathComponent)'" }.joined(separator: ", ")
        }
        var change: [String] = []
        if !added.isEmpty { change.append("\(list(added)) \(added.count == 1 ? "was" : "were") added") }
        if !removed.isEmpty { change.append("\(list(removed)) \(removed.count == 1 ? "was" : "were") removed") }
        return "\(change.joined(separator: " and ")) in '\(folder)' after SwiftPM planned this build, so the model's "
            + "code would be generated without \(added.isEmpty ? "that change" : added.count == 1 ? "it" : "them") (and "
            + "uses of its entities fail with \"cannot find '…' in scope\"). SwiftPM keeps a build plugin's list of "
            + "files until Package.swift changes: change Package.swift (a comment will do) and build again."
    }
}

struct Validate: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Check a model and report every problem.")

    @OptionGroup var model: ModelOptions

    func run() throws {
        let (schema, files, warnings) = try model.loadCountingWarnings()
        do {
            _ = try Generator.generate(schema, modelFiles: files)
        } catch let error as SchemaError {
            printDiagnostics(error.diagnostics)
            throw ExitCode.failure
        }
        print(Self.summary(schema, files: files, warnings: warnings))
    }

    /// What a valid model holds, in one line: `3 model files, 5 entities, 1 enum, 12 fetches:
    /// valid (no errors, no warnings)`.
    static func summary(_ schema: Schema, files: [String], warnings: Int) -> String {
        func count(_ number: Int, _ noun: String, _ plural: String? = nil) -> String {
            "\(number) \(number == 1 ? noun : plural ?? noun + "s")"
        }
        let fetches = schema.entities.reduce(0) { $0 + $1.fetches.count }
        let verdict = warnings == 0 ? "no warnings" : count(warnings, "warning") + " above"
        return "\(count(files.count, "model file")), \(count(schema.entities.count, "entity", "entities")), "
            + "\(count(schema.enums.count, "enum")), \(count(fetches, "fetch", "fetches")): valid (no errors, \(verdict))"
    }
}

struct Diagram: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the model as a Mermaid entity-relationship diagram.")

    @OptionGroup var model: ModelOptions

    func run() throws {
        let (schema, _) = try model.load()
        print(MermaidRenderer.render(schema), terminator: "")
    }
}

struct JSONSchemaCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "json-schema",
        abstract: "Print a JSON Schema (draft 2020-12) of the model language, version 1, for editors.")

    func run() throws {
        print(JSONSchemaRenderer.render(), terminator: "")
    }
}
