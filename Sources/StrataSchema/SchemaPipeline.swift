import Foundation

/// One model file: its path (as it should appear in diagnostics) and its bytes.
public struct ModelFile: Hashable, Sendable {
    /// The path, as diagnostics should print it.
    public var path: String
    /// The raw bytes; they must be UTF-8.
    public var contents: [UInt8]

    /// A file from its bytes.
    public init(path: String, contents: [UInt8]) {
        self.path = path
        self.contents = contents
    }

    /// A file from text (tests, in-memory models).
    public init(path: String, text: String) {
        self.init(path: path, contents: Array(text.utf8))
    }
}

/// What `SchemaPipeline.load` produces: a schema when there are no errors, and every
/// diagnostic of the run, sorted by file, line and column.
public struct SchemaLoadResult: Hashable, Sendable {
    /// The validated schema; nil when any diagnostic is an error.
    public var schema: Schema?
    /// Every error, warning and note, sorted by file, line and column; notes follow their error.
    public var diagnostics: [Diagnostic]

    /// A result.
    public init(schema: Schema?, diagnostics: [Diagnostic]) {
        self.schema = schema
        self.diagnostics = diagnostics
    }

    /// True when any diagnostic is an error.
    public var hasErrors: Bool { diagnostics.contains { $0.severity == .error } }
}

/// The one entry point of the front end: model files → YAML trees → `Schema` → validation.
///
/// The CLI, the build plugin and the code generator call only this:
///
/// ```swift
/// let result = SchemaPipeline.load(files: [ModelFile(path: "Models/Notes.yaml", contents: bytes)])
/// for diagnostic in result.diagnostics { print(diagnostic) }
/// guard let schema = result.schema else { exit(1) }
/// ```
public enum SchemaPipeline {
    /// Loads, decodes and validates the files of one model (entities may refer across files).
    /// The files are read in the order of their paths, whatever the order given, so that the
    /// same model always gives the same schema and the same generated code.
    public static func load(files: [ModelFile], modelName: String = "StrataModel") -> SchemaLoadResult {
        var bag = DiagnosticBag()
        var roots: [YAMLNode] = []
        for file in files.sorted(by: { $0.path < $1.path }) {
            let (root, diagnostics) = YAMLLoader.load(file)
            diagnostics.forEach { bag.append($0) }
            if let root { roots.append(root) }
        }
        var sourceMap = SchemaSourceMap()
        var schema = SchemaDecoder.decode(roots, modelName: modelName, sourceMap: &sourceMap, diagnostics: &bag)
        // When a file couldn't be read as YAML, references into it would all look unknown:
        // report the structure and the file-local rules of the other files, but not
        // cross-references.
        if roots.count == files.count {
            SchemaValidator.validate(&schema, sourceMap: sourceMap, diagnostics: &bag)
        } else {
            SchemaValidator.validateFileLocal(schema, sourceMap: sourceMap, diagnostics: &bag)
        }
        return SchemaLoadResult(schema: bag.hasErrors ? nil : schema, diagnostics: sortedKeepingNotes(bag.diagnostics))
    }

    /// Reads `paths` (files, or directories expanded to their `*.yaml`/`*.yml` files in sorted
    /// order) and loads them. A path that can't be read is an error diagnostic.
    public static func load(paths: [String], modelName: String = "StrataModel") -> SchemaLoadResult {
        var files: [ModelFile] = []
        var problems: [Diagnostic] = []
        for path in paths {
            let expanded = expand(path)
            if expanded.isEmpty {
                problems.append(.error("no model files (*.yaml, *.yml) in '\(path)'", at: nil))
            }
            for filePath in expanded {
                if let data = FileManager.default.contents(atPath: filePath) {
                    files.append(ModelFile(path: filePath, contents: Array(data)))
                } else {
                    problems.append(.error("cannot read model file '\(filePath)'", at: nil))
                }
            }
        }
        var result = load(files: files, modelName: modelName)
        if !problems.isEmpty {
            result.diagnostics = problems + result.diagnostics
            result.schema = nil
        }
        return result
    }

    /// Diagnostics sorted by file, line and column, each note staying right after the error or
    /// warning it belongs to (the one appended before it).
    static func sortedKeepingNotes(_ diagnostics: [Diagnostic]) -> [Diagnostic] {
        var groups: [[Diagnostic]] = []
        for diagnostic in diagnostics {
            if diagnostic.severity == .note, !groups.isEmpty {
                groups[groups.count - 1].append(diagnostic)
            } else {
                groups.append([diagnostic])
            }
        }
        // The same order as `DiagnosticBag.sorted`, applied to each group's leader.
        let order = groups.indices.sorted { a, b in
            switch (groups[a][0].location, groups[b][0].location) {
            case let (l?, r?) where l != r: return l < r
            case (nil, _?): return true
            case (_?, nil): return false
            default: return a < b
            }
        }
        return order.flatMap { groups[$0] }
    }

    /// A directory's `*.yaml`/`*.yml` files, sorted, hidden ones (`.name.yaml`) left out as
    /// the build plugin leaves them out; any other path as is.
    public static func expand(_ path: String) -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            return [path]
        }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        let separator = path.hasSuffix("/") ? "" : "/"
        return names.filter { !$0.hasPrefix(".") && ($0.hasSuffix(".yaml") || $0.hasSuffix(".yml")) }.sorted()
            .map { path + separator + $0 }
    }
}
