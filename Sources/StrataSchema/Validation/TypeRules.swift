/// Attribute types are built-in types or enums of the model.
struct AttributeTypeRule: SchemaRule {
    static func check(_ context: ValidationContext, _ diagnostics: inout DiagnosticBag) {
        let known = Array(AttributeType.builtins.keys).sorted() + context.schema.enums.map(\.name)
        for entity in context.schema.entities {
            for attribute in entity.attributes {
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
