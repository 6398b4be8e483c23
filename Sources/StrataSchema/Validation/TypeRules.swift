/// Attribute types are built-in types or enums of the model.
struct AttributeTypeRule: SchemaRule {
    static func check(_ context: ValidationContext, _ diagnostics: inout DiagnosticBag) {
        let known = Array(AttributeType.builtins.keys).sorted() + context.schema.enums.map(\.name)
        for entity in context.schema.entities {
            for attribute in entity.attributes where attribute.inheritedFrom == nil {
                guard case .enumeration(let name) = attribute.type, context.schema.enumType(named: name) == nil
                else { continue }
                let location = context.location(
                    .attribute(attribute.name, of: entity.name, .type), or: attribute.location)
                if context.entity(name) != nil {
                    diagnostics.error(
                        "'\(name)' is an entity; declare '\(attribute.name)' under 'relationships' with 'to: \(name)'",
                        at: location)
                } else {
                    diagnostics.error(
                        "unknown type '\(name)' for attribute '\(entity.name).\(attribute.name)'"
                            + Suggestions.didYouMean(name, in: known),
                        at: location)
                }
            }
        }
    }
}

/// `default:` literals are checked against their attribute's type once every enum is known,
/// and stored as `DefaultValue`s.
enum DefaultValueRule {
    static func resolve(_ schema: inout Schema, sourceMap: SchemaSourceMap, diagnostics: inout DiagnosticBag) {
        let snapshot = schema
        for entityIndex in schema.entities.indices {
            let entity = schema.entities[entityIndex]
            for attributeIndex in entity.attributes.indices {
                let attribute = entity.attributes[attributeIndex]
                let qualified = "\(entity.name).\(attribute.name)"
                guard let node = sourceMap.defaults[.attribute(attribute.name, of: entity.name, .default)],
                    let scalar = node.scalar
                else { continue }
                if case .enumeration(let name) = attribute.type, snapshot.enumType(named: name) == nil { continue }
                switch DefaultValueParser.parse(scalar, type: attribute.type, schema: snapshot, attribute: qualified) {
                case .success(let value):
                    schema.entities[entityIndex].attributes[attributeIndex].defaultValue = value
                case .failure(let failure):
                    diagnostics.error(failure.message, at: node.location)
                }
            }
        }
    }
}

/// `Codable<T>` attributes are stored as JSON text: they have no order and no equality SQLite
/// could use, so they cannot be indexed or unique, nor be named by `unique:` or `indexes:`
/// (sorts, sections and predicates refuse them where key paths are resolved).
struct CodableAttributeRule: SchemaRule {
    static func check(_ context: ValidationContext, _ diagnostics: inout DiagnosticBag) {
        for entity in context.schema.entities {
            for attribute in entity.attributes where attribute.type.isCodable && attribute.inheritedFrom == nil {
                for (flag, isSet) in [("indexed", attribute.isIndexed), ("unique", attribute.isUnique)] where isSet {
                    diagnostics.error(
                        "'\(flag)' on '\(entity.name).\(attribute.name)': a Codable attribute is stored as JSON text, "
                            + "which has no useful order or equality; index or constrain an attribute of a plain type",
                        at: attribute.location)
                }
            }
            for (constraint, lists) in [(SourceMapKey.Constraint.unique, entity.uniques), (.indexes, entity.indexes.map(\.columns))] {
                for (i, names) in lists.enumerated() {
                    for (j, name) in names.enumerated() {
                        guard let attribute = entity.attribute(named: name), attribute.type.isCodable else { continue }
                        diagnostics.error(
                            "'\(name)' in '\(constraint.rawValue)' of '\(entity.name)' is a Codable attribute, stored as "
                                + "JSON text; it cannot be part of a unique constraint or an index",
                            at: context.location(
                                .constraintName(constraint, of: entity.name, list: i, position: j), or: entity.location))
                    }
                }
            }
        }
    }
}
