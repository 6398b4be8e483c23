/// How output file names derive from input names, for the generator and the build plugin
/// alike: `Plugins/PluginsShared/OutputNaming.swift` links to this file, so the plugins
/// compile this very file (a plugin cannot import a library target). It uses the standard
/// library only, for that reason.
///
/// - each model file `<stem>.yaml` / `<stem>.yml` gives `<stem>.strata.swift` (its entities
///   and enums);
/// - the model gives `<ModelName>+Schema.strata.swift` (the namespace enum and the schema
///   descriptor);
/// - names must be unique, compared case-insensitively (for case-insensitive file systems).
///
/// The `.strata.swift` suffix keeps generated files from colliding with the target's own
/// Swift files: SwiftPM names object files by source file name, so a `Folders.swift` beside a
/// generated `Folders.swift` failed with "multiple producers", naming neither the model nor
/// the fix.
public enum OutputNaming {
    /// The suffix of every generated file.
    public static let suffix = ".strata.swift"

    /// `Models/Notes.yaml` → `Notes.strata.swift`.
    public static func fileName(forModelFile path: String) -> String {
        var name = Substring(path.split(separator: "/", omittingEmptySubsequences: true).last ?? Substring(path))
        for ext in [".yaml", ".yml"] where name.hasSuffix(ext) {
            name = name.dropLast(ext.count)
            break
        }
        return name + suffix
    }

    /// `<ModelName>+Schema.strata.swift`.
    public static func schemaFileName(modelName: String) -> String { modelName + "+Schema" + suffix }

    /// Every output name for these model files, in order: one per model file, then the
    /// schema file. Clashes are not checked (see ``clashes(in:)``).
    public static func fileNames(modelFiles: [String], modelName: String) -> [String] {
        modelFiles.map(fileName(forModelFile:)) + [schemaFileName(modelName: modelName)]
    }

    /// Each name equal to an earlier one when compared case-insensitively, in order, with
    /// the position of the earliest such name.
    public static func clashes(in names: [String]) -> [Clash] {
        var seen: [String: Int] = [:]
        var result: [Clash] = []
        for (index, name) in names.enumerated() {
            if let first = seen[name.lowercased()] {
                result.append(Clash(first: first, second: index, name: name))
            } else {
                seen[name.lowercased()] = index
            }
        }
        return result
    }

    /// Every output name for these model files, in order (model files first, then the
    /// schema file), or the clashes as messages that say what to rename.
    public static func outputFileNames(modelFiles: [String], modelName: String) -> Result<[String], NamingError> {
        let names = fileNames(modelFiles: modelFiles, modelName: modelName)
        let messages = clashes(in: names).map { clash in
            let a = clash.first < modelFiles.count ? modelFiles[clash.first] : "the schema file"
            let b = clash.second < modelFiles.count ? modelFiles[clash.second] : "the schema file of model '\(modelName)'"
            return "\(a) and \(b) would both generate '\(clash.name)'; rename one of them"
        }
        return messages.isEmpty ? .success(names) : .failure(NamingError(messages: messages))
    }

    /// Two inputs that would generate the same file name.
    public struct Clash: Hashable, Sendable {
        /// The position of the earlier input, in the list of names checked.
        public var first: Int
        /// The position of the later input.
        public var second: Int
        /// The later input's output name.
        public var name: String
    }

    /// Model files whose output names would clash, one message per clash.
    public struct NamingError: Error, Sendable, CustomStringConvertible {
        /// What clashes, one sentence per clash.
        public var messages: [String]
        /// The messages, one per line.
        public var description: String { messages.joined(separator: "\n") }
    }
}
