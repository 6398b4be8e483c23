import Foundation
import PackagePlugin

/// Writes a target's generated model code into the package, for people who check it in:
///
/// ```
/// swift package --allow-writing-to-package-directory strata-generate --target MyApp
/// ```
///
/// Options: `--target NAME` (repeatable; default: every target with its own `Models/`
/// folder), `--model-name NAME` (default `StrataModel`), `--output FOLDER` (inside the
/// target, default `Generated`). The model is found as by StrataPlugin (both use
/// `ModelsFolder`): the target's own `Models/`, else the package root's `Models/`. A target
/// should use either this command or the StrataPlugin build plugin, not both (the types
/// would be declared twice).
@main
struct StrataGenerate: CommandPlugin {
    func performCommand(context: PluginContext, arguments: [String]) async throws {
        var extractor = ArgumentExtractor(arguments)
        let targetNames = extractor.extractOption(named: "target")
        let modelName = extractor.extractOption(named: "model-name").last ?? "StrataModel"
        let outputFolder = extractor.extractOption(named: "output").last ?? "Generated"
        if let unknown = extractor.remainingArguments.first {
            throw CommandError("unknown argument '\(unknown)'; use --target NAME, --model-name NAME, --output FOLDER")
        }

        let packageModels = ModelsFolder.folder(in: context.package.directoryURL)
        var targets: [SourceModuleTarget]
        if targetNames.isEmpty {
            targets = context.package.targets.compactMap { $0 as? SourceModuleTarget }.filter {
                ModelsFolder.exists(ModelsFolder.folder(in: $0.directoryURL))
            }
            if targets.isEmpty {
                throw CommandError(
                    "no target has its own Models/ folder; name the target to generate for with --target NAME"
                        + (ModelsFolder.exists(packageModels) ? " (it will use \(packageModels.path))" : ""))
            }
        } else {
            targets = try context.package.targets(named: targetNames).map { target in
                guard let target = target as? SourceModuleTarget else {
                    throw CommandError("target '\(target.name)' has no Swift sources to generate into")
                }
                return target
            }
        }

        let tool = try context.tool(named: "strata")
        for target in targets {
            let folder = ModelsFolder(targetDirectory: target.directoryURL, packageDirectory: context.package.directoryURL)
            guard let models = folder.existing else {
                throw CommandError("target '\(target.name)' has no model: create '\(folder.own.path)' or '\(folder.package.path)' with *.yaml files")
            }
            let output = target.directoryURL.appendingPathComponent(outputFolder, isDirectory: true)
            let process = Process()
            process.executableURL = tool.url
            process.arguments = ["generate", "--output", output.path, "--model-name", modelName, models.path]
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                throw CommandError("strata generate failed for target '\(target.name)' (see the diagnostics above)")
            }
            print("Generated \(target.name)'s model code into \(output.path)")
        }
    }
}

struct CommandError: Error, CustomStringConvertible {
    var description: String
    init(_ message: String) { description = "StrataGenerate: " + message }
}
