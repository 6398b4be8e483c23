/// `unique:` and `indexes:` name attributes or to-one relationships of their entity.
struct ConstraintNamesRule: SchemaRule {
    static func check(_ context: ValidationContext, _ diagnostics: inout DiagnosticBag) {
        for entity in context.schema.entities {
            let columns = entity.attributes.map(\.name) + entity.relationships.filter { !$0.isToMany }.map(\.name)
            for (constraint, lists) in [(SourceMapKey.Constraint.unique, entity.uniques), (.indexes, entity.indexes)] {
                let key = constraint.rawValue
                for (i, names) in lists.enumerated() {
                    var seen: Set<String> = []
                    for (j, name) in names.enumerated() {
                        let location = context.location(
                            .constraintName(constraint, of: entity.name, list: i, position: j), or: entity.location)
                        if let relationship = entity.relationship(named: name), relationship.isToMany {
                            diagnostics.error(
                                "'\(name)' in '\(key)' of '\(entity.name)' is a to-many relationship; only attributes and to-one relationships have columns",
                                at: location)
                        } else if !columns.contains(name) {
                            diagnostics.error(
                                "unknown attribute or relationship '\(name)' in '\(key)' of '\(entity.name)'"
                                    + Suggestions.didYouMean(name, in: columns),
                                at: location)
                        } else if !seen.insert(name).inserted {
                            diagnostics.error("'\(name)' is listed twice in the same '\(key)' element", at: location)
                        }
                    }
                }
            }
        }
    }
}

/// Warnings for indexes SQLite would already have: a unique constraint is an index.
struct RedundantIndexRule: SchemaRule {
    static func check(_ context: ValidationContext, _ diagnostics: inout DiagnosticBag) {
        for entity in context.schema.entities {
            for attribute in entity.attributes where attribute.isIndexed && attribute.isUnique && attribute.inheritedFrom == nil {
                diagnostics.warning(
                    "'indexed' on '\(entity.name).\(attribute.name)' is redundant: a unique attribute is already indexed",
                    at: attribute.location)
            }
            var indexed: [[String]: String] = [:]  // columns → what already indexes them
            for attribute in entity.attributes where attribute.isUnique {
                indexed[[attribute.name]] = "'unique: true' on '\(attribute.name)'"
            }
            for attribute in entity.attributes where attribute.isIndexed && !attribute.isUnique {
                indexed[[attribute.name]] = "'indexed: true' on '\(attribute.name)'"
            }
            for unique in entity.uniques where indexed[unique] == nil {
                indexed[unique] = "the unique constraint [\(unique.joined(separator: ", "))]"
            }
            for (i, index) in entity.indexes.enumerated() {
                let location = context.location(.constraint(.indexes, of: entity.name, list: i), or: entity.location)
                if let existing = indexed[index] {
                    diagnostics.warning(
                        "index [\(index.joined(separator: ", "))] of '\(entity.name)' duplicates \(existing), which is already indexed",
                        at: location)
                } else {
                    indexed[index] = "the index [\(index.joined(separator: ", "))]"
                }
            }
        }
    }
}
