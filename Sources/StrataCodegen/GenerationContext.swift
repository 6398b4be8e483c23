import StrataSchema

/// What the generator knows about a whole schema while it writes one declaration.
struct GenerationContext {
    let schema: Schema
    let layout: StorageLayout

    init(schema: Schema) {
        self.schema = schema
        self.layout = StorageLayout(schema: schema)
    }

    /// Refuses member, table and column names that clash. Every schema that passed
    /// `SchemaPipeline` has been checked already; this guards schemas built in code.
    func check() throws {
        let diagnostics = SchemaValidator.nameDiagnostics(of: schema)
        if diagnostics.contains(where: { $0.severity == .error }) { throw SchemaError(diagnostics: diagnostics) }
    }

    // MARK: - Names

    func typeName(_ entityName: String) -> String { SwiftNames.identifier(entityName) }

    func attributeType(_ attribute: Attribute) -> String {
        SwiftNames.type(attribute.type) + (attribute.isOptional ? "?" : "")
    }

    func location(of entity: Entity) -> SourceLocation { entity.location }

    // MARK: - File header

    func writeHeader(_ w: inout SwiftWriter) {
        w.line(Generator.header(modelName: schema.name) + " Do not edit: edit the model and rebuild.")
        w.line("import Foundation")
        w.line("import GRDB")
        w.line("import Strata")
    }

    // MARK: - Enums

    func writeEnum(_ enumType: EnumType, _ w: inout SwiftWriter) {
        w.line("/// String-backed enum `\(enumType.name)`.")
        w.line("public enum \(SwiftNames.identifier(enumType.name)):")
        w.indent { w in
            w.line("Swift.String, Swift.Sendable, Swift.Hashable, Swift.Codable, Swift.CaseIterable, GRDB.DatabaseValueConvertible")
        }
        w.line("{")
        w.indent { w in
            for enumCase in enumType.cases {
                w.line("case \(SwiftNames.identifier(enumCase))")
            }
        }
        w.line("}")
    }
}
