/// `foreignKey:` names the key of a to-one that stores it: an identifier, on a to-one whose
/// key is in its own entity's table. (Clashes with other members and columns are reported by
/// `MemberNameRule` and `ColumnNameRule`.)
struct ForeignKeyNameRule: SchemaRule {
    static func check(_ context: ValidationContext, _ diagnostics: inout DiagnosticBag) {
        let layout = StorageLayout(schema: context.schema)
        for entity in context.schema.entities {
            for relationship in entity.relationships {
                guard let name = relationship.foreignKey else { continue }
                let qualified = "\(entity.name).\(relationship.name)"
                let location = context.location(
                    .relationship(relationship.name, of: entity.name, .foreignKey), or: relationship.location)
                if relationship.isToMany {
                    diagnostics.error(
                        "'foreignKey' applies only to to-one relationships, and '\(qualified)' is to-many; a to-many has no key column of its own",
                        at: location)
                } else if !IdentifierRule.isIdentifier(name) {
                    diagnostics.error(
                        "foreignKey '\(name)' of '\(qualified)' is not a valid identifier; use letters, digits and '_', not starting with a digit",
                        at: location)
                } else if layout.foreignKeyColumn(of: relationship, in: entity) == nil,
                          context.entity(relationship.destination)?.relationship(named: relationship.inverse) != nil
                {
                    diagnostics.error(
                        "'foreignKey' on '\(qualified)' names nothing: this one-to-one stores its key on the other side, '\(relationship.destination).\(relationship.inverse)'; set 'foreignKey' there",
                        at: location)
                }
            }
        }
    }
}

/// `transient: true` attributes have no column: they need a value to start from when an
/// object is read (a default, or nil), and cannot be indexed or constrained.
struct TransientAttributeRule: SchemaRule {
    static func check(_ context: ValidationContext, _ diagnostics: inout DiagnosticBag) {
        for entity in context.schema.entities {
            for attribute in entity.attributes where attribute.isTransient {
                let qualified = "\(entity.name).\(attribute.name)"
                if !attribute.isOptional && context.sourceMap.defaults[.attribute(attribute.name, of: entity.name, .default)] == nil
                    && attribute.defaultValue == nil
                {
                    diagnostics.error(
                        "transient attribute '\(qualified)' needs a 'default' or 'optional: true': an object read from the store starts with that value",
                        at: attribute.location)
                }
                if attribute.isIndexed || attribute.isUnique {
                    diagnostics.error(
                        "transient attribute '\(qualified)' has no column, so it cannot be \(attribute.isUnique ? "unique" : "indexed")",
                        at: attribute.location)
                }
                if attribute.renamedFrom != nil {
                    diagnostics.error(
                        "transient attribute '\(qualified)' has no column to rename; remove 'renamedFrom'",
                        at: attribute.location)
                }
            }
            let transient = Set(entity.attributes.filter(\.isTransient).map(\.name))
            guard !transient.isEmpty else { continue }
            for (constraint, lists) in [(SourceMapKey.Constraint.unique, entity.uniques), (.indexes, entity.indexes.map(\.columns))] {
                for (i, names) in lists.enumerated() {
                    for (j, name) in names.enumerated() where transient.contains(name) {
                        diagnostics.error(
                            "'\(name)' in '\(constraint.rawValue)' of '\(entity.name)' is a transient attribute, which has no column",
                            at: context.location(
                                .constraintName(constraint, of: entity.name, list: i, position: j), or: entity.location))
                    }
                }
            }
        }
    }
}
