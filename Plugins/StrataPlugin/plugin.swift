import Foundation
import PackagePlugin

/// Generates Swift code from a target's Strata model at build time.
///
/// The model is every `*.yaml`/`*.yml` file of the target's own `Models/` folder when it has
/// one, else of `Models/` at the package root. The plugin runs `strata generate` with every
/// model file, the models folder and the tool itself as inputs and every generated file as an
/// output, so the build system reruns it only when one of them changes, and the tool rewrites
/// a file only when its bytes change. SwiftPM keeps the list of files until `Package.swift`
/// changes; a file added to or removed from the folder since reruns the command (the folder
/// is an input), and the tool then fails, saying to change `Package.swift`.
///
/// Output names follow `OutputNaming`, the generator's own file, which this plugin compiles
/// from `PluginsShared/`: `<stem>.yaml`/`<stem>.yml` → `<stem>.strata.swift`, plus
/// `<ModelName>+Schema.strata.swift`; names must be unique, compared case-insensitively.
@main
struct StrataPlugin: BuildToolPlugin {
    /// The model's name: the Swift namespace of the generated schema descriptor.
    static let modelName = "StrataModel"

    func createBuildCommands(context: PluginContext, target: Target) async throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        let modelsFolder = try Self.modelsFolder(
            target: target.name, targetDirectory: target.directoryURL, packageDirectory: context.package.directoryURL)
        let files = try Self.modelFiles(in: modelsFolder)
        let outputNames = try Self.outputNames(for: files, modelName: Self.modelName)
        let outputDirectory = context.pluginWorkDirectoryURL.appendingPathComponent("GeneratedSources", isDirectory: true)
        let tool = try context.tool(named: "strata")
        return [
            .buildCommand(
                displayName: "Generating Strata model code for \(target.name) from \(files.count) model file(s)",
                executable: tool.url,
                arguments: ["generate", "--output", outputDirectory.path, "--model-name", Self.modelName,
                            "--models-folder", modelsFolder.path]
                    + files.map(\.path),
                // The folder too: a file added or removed there reruns the command, which then
                // says that SwiftPM's cached plan missed it (see `strata generate --models-folder`).
                inputFiles: files + [modelsFolder, tool.url],
                outputFiles: outputNames.map { outputDirectory.appendingPathComponent($0) }
            )
        ]
    }

    /// The target's `Models/` if it exists, else the package root's `Models/`.
    static func modelsFolder(target: String, targetDirectory: URL, packageDirectory: URL) throws -> URL {
        let folder = ModelsFolder(targetDirectory: targetDirectory, packageDirectory: packageDirectory)
        guard let existing = folder.existing else {
            throw PluginError.noModelsFolder(target: target, targetFolder: folder.own.path, packageFolder: folder.package.path)
        }
        return existing
    }

    static func modelFiles(in folder: URL) throws -> [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        let files = names.filter { !$0.hasPrefix(".") && ($0.hasSuffix(".yaml") || $0.hasSuffix(".yml")) }.sorted()
        if files.isEmpty { throw PluginError.noModelFiles(folder: folder.path) }
        return files.map { folder.appendingPathComponent($0) }
    }

    /// `<stem>.strata.swift` per model file, then `<ModelName>+Schema.strata.swift`.
    static func outputNames(for files: [URL], modelName: String) throws -> [String] {
        let names = OutputNaming.fileNames(modelFiles: files.map(\.lastPathComponent), modelName: modelName)
        if let clash = OutputNaming.clashes(in: names).first {
            func owner(_ index: Int) -> String {
                index < files.count ? files[index].lastPathComponent : "the model's schema file"
            }
            throw PluginError.clashingOutputs(first: owner(clash.first), second: owner(clash.second), output: clash.name)
        }
        return names
    }
}

/// Errors that say what to do.
enum PluginError: Error, CustomStringConvertible {
    case noModelsFolder(target: String, targetFolder: String, packageFolder: String)
    case noModelFiles(folder: String)
    case clashingOutputs(first: String, second: String, output: String)

    var description: String {
        switch self {
        case .noModelsFolder(let target, let targetFolder, let packageFolder):
            "StrataPlugin: target '\(target)' has no model. Create '\(targetFolder)' or '\(packageFolder)' with your *.yaml model files, or remove StrataPlugin from the target's plugins."
        case .noModelFiles(let folder):
            "StrataPlugin: '\(folder)' holds no *.yaml or *.yml model file. Add one (see the Strata README for the model language)."
        case .clashingOutputs(let first, let second, let output):
            "StrataPlugin: '\(first)' and '\(second)' would both generate '\(output)'. Rename one of them."
        }
    }
}
