import StrataSchema

/// One file of generated Swift source.
public struct GeneratedFile: Hashable, Sendable {
    /// The file name, without a directory (`Notes.swift`).
    public var name: String
    public var contents: String

    public init(name: String, contents: String) {
        self.name = name
        self.contents = contents
    }
}

/// Turns a validated ``Schema`` into Swift source files: a pure function of its input, so
/// the same schema always gives the same bytes.
///
/// ```swift
/// let files = try Generator.generate(schema, modelFiles: ["Models/Notes.yaml"])
/// // Notes.swift, StrataModel+Schema.swift
/// ```
///
/// Generated code depends on `Strata`, GRDB and Foundation only, and qualifies every name
/// it takes from them (`Strata.`, `Swift.`, `Foundation.`, `GRDB.`), so entities may be
/// named `Section`, `Item`, `Date` or `String`.
public enum Generator {
    /// Generates one file per model file (the entities and enums declared in it, in order)
    /// and one `<ModelName>+Schema.swift` (see ``OutputNaming``).
    ///
    /// - Parameters:
    ///   - schema: a validated schema; its `name` is the model name.
    ///   - modelFiles: the model files, as named in the schema's source locations. With no
    ///     files, the files are those of the schema's locations, in order of appearance.
    /// - Throws: ``SchemaError`` for what the generator cannot express (name clashes,
    ///   reserved names, predicates the runtime cannot represent).
    public static func generate(_ schema: Schema, modelFiles: [String] = []) throws -> [GeneratedFile] {
        var files = modelFiles
        if files.isEmpty {
            for location in schema.enums.map(\.location) + schema.entities.map(\.location)
            where !files.contains(location.file) {
                files.append(location.file)
            }
        }
        let names: [String]
        switch OutputNaming.outputFileNames(modelFiles: files, modelName: schema.name) {
        case .success(let result): names = result
        case .failure(let error):
            throw SchemaError(diagnostics: error.messages.map { .error($0, at: nil) })
        }
        let context = GenerationContext(schema: schema)
        try context.check()

        var result: [GeneratedFile] = []
        for (index, file) in files.enumerated() {
            var writer = SwiftWriter()
            context.writeHeader(&writer)
            for enumType in schema.enums where enumType.location.file == file {
                writer.blankLine()
                context.writeEnum(enumType, &writer)
            }
            for entity in schema.entities where entity.location.file == file {
                writer.blankLine()
                try context.writeEntity(entity, &writer)
            }
            result.append(GeneratedFile(name: names[index], contents: writer.output))
        }

        var writer = SwiftWriter()
        context.writeHeader(&writer)
        for enumType in schema.enums where !files.contains(enumType.location.file) {
            writer.blankLine()
            context.writeEnum(enumType, &writer)
        }
        for entity in schema.entities where !files.contains(entity.location.file) {
            writer.blankLine()
            try context.writeEntity(entity, &writer)
        }
        writer.blankLine()
        context.writeModelNamespace(&writer)
        result.append(GeneratedFile(name: names[files.count], contents: writer.output))
        return result
    }
}
