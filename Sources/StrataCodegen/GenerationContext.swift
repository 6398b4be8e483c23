import StrataSchema

/// What the generator knows about a whole schema while it writes one declaration.
struct GenerationContext {
    let schema: Schema
    let layout: StorageLayout

    init(schema: Schema) {
        self.schema = schema
        self.layout = StorageLayout(schema: schema)
    }

    /// Refuses storage names that clash (names themselves are checked by StrataSchema's
    /// validator, which every schema passes before it gets here).
    func check() throws {
        var bag = DiagnosticBag()
        var tables: [String: String] = [:]
        for entity in schema.entities { tables[entity.name] = "entity '\(entity.name)'" }
        for entity in schema.entities {
            var columns = Set(entity.attributes.map(\.name))
            for relationship in entity.relationships {
                switch layout.storage(of: relationship, in: entity) {
                case .foreignKey(let column):
                    if !columns.insert(column).inserted {
                        bag.error("the foreign key column '\(column)' of relationship '\(relationship.name)' clashes with another column of '\(entity.name)'; rename the attribute or the relationship", at: relationship.location)
                    }
                case .joinTable(let name, _, _):
                    if let other = tables[name], other != "join table of '\(entity.name).\(relationship.name)'",
                        !other.hasPrefix("join table of '\(relationship.destination).\(relationship.inverse)'")
                    {
                        bag.error("the join table '\(name)' of relationship '\(relationship.name)' clashes with \(other); rename the relationship", at: relationship.location)
                    } else if tables[name] == nil {
                        tables[name] = "join table of '\(entity.name).\(relationship.name)'"
                    }
                case .inverseForeignKey:
                    break
                }
            }
        }
        if bag.hasErrors { throw SchemaError(diagnostics: bag.sorted) }
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
