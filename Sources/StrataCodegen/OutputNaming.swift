/// How output file names derive from input names. The build plugin cannot import this
/// module, so `Plugins/StrataPlugin/plugin.swift` repeats the same rule; keep both in step:
///
/// - each model file `<stem>.yaml` / `<stem>.yml` gives `<stem>.swift` (its entities and enums);
/// - the model gives `<ModelName>+Schema.swift` (the namespace enum and the schema descriptor);
/// - names must be unique, compared case-insensitively (for case-insensitive file systems).
public enum OutputNaming {
    /// `Models/Notes.yaml` → `Notes.swift`.
    public static func fileName(forModelFile path: String) -> String {
        var name = Substring(path.split(separator: "/", omittingEmptySubsequences: true).last ?? Substring(path))
        for ext in [".yaml", ".yml"] where name.hasSuffix(ext) {
            name = name.dropLast(ext.count)
            break
        }
        return name + ".swift"
    }

    /// `<ModelName>+Schema.swift`.
    public static func schemaFileName(modelName: String) -> String { modelName + "+Schema.swift" }

    /// Every output name for these model files, in order (model files first, then the
    /// schema file), or the clashes as messages that say what to rename.
    public static func outputFileNames(modelFiles: [String], modelName: String) -> Result<[String], NamingError> {
        var names = modelFiles.map(fileName(forModelFile:))
        names.append(schemaFileName(modelName: modelName))
        var seen: [String: Int] = [:]
        var messages: [String] = []
        for (index, name) in names.enumerated() {
            if let first = seen[name.lowercased()] {
                let a = first < modelFiles.count ? modelFiles[first] : "the schema file"
                let b = index < modelFiles.count ? modelFiles[index] : "the schema file of model '\(modelName)'"
                messages.append("\(a) and \(b) would both generate '\(name)'; rename one of them")
            } else {
                seen[name.lowercased()] = index
            }
        }
        return messages.isEmpty ? .success(names) : .failure(NamingError(messages: messages))
    }

    /// Model files whose output names would clash, one message per clash.
    public struct NamingError: Error, Sendable, CustomStringConvertible {
        /// What clashes, one sentence per clash.
        public var messages: [String]
        /// The messages, one per line.
        public var description: String { messages.joined(separator: "\n") }
    }
}
