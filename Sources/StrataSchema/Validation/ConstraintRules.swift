/// `unique:` and `indexes:` name attributes or to-one relationships of their entity.
struct ConstraintNamesRule: SchemaRule {
    static func check(_ context: ValidationContext, _ diagnostics: inout DiagnosticBag) {
        for entity in context.schema.entities {
            let columns = entity.attributes.map(\.name) + entity.relationships.filter { !$0.isToMany }.map(\.name)
            for (constraint, lists) in [(SourceMapKey.Constraint.unique, entity.uniques), (.indexes, entity.indexes.map(\.columns))] {
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
            // Columns (a `-` prefix for descending) → what already indexes them.
            var indexed: [[String]: String] = [:]
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
                let key = zip(index.columns, index.descending).map { $1 ? "-" + $0 : $0 }
                if let existing = indexed[key] {
                    diagnostics.warning(
                        "index [\(key.joined(separator: ", "))] of '\(entity.name)' duplicates \(existing), which is already indexed",
                        at: location)
                } else {
                    indexed[key] = "the index [\(key.joined(separator: ", "))]"
                }
            }
        }
    }
}

/// Index names chosen with `name:` are SQLite names of the whole database: each must be an
/// identifier, unique (ignoring case, as SQLite does) among indexes and tables, and must not
/// start with `sqlite_` or `strata_`.
struct IndexNameRule: SchemaRule {
    static func check(_ context: ValidationContext, _ diagnostics: inout DiagnosticBag) {
        let layout = StorageLayout(schema: context.schema)
        // Lowercased table name → what it is.
        var tables: [String: String] = [:]
        for entity in context.schema.entities where !entity.isAbstract {
            tables[entity.name.lowercased()] = "the table of entity '\(entity.name)'"
            for relationship in entity.relationships {
                if case .joinTable(let name, _, _) = layout.storage(of: relationship, in: entity) {
                    tables[name.lowercased()] = tables[name.lowercased()] ?? "the join table '\(name)'"
                }
            }
        }
        var seen: [String: (name: String, entity: String, location: SourceLocation)] = [:]
        for entity in context.schema.entities {
            for (i, index) in entity.indexes.enumerated() {
                guard let name = index.name else { continue }
                let location = context.location(.indexName(of: entity.name, list: i), or: entity.location)
                let key = name.lowercased()
                if entity.isAbstract {
                    diagnostics.error(
                        "index name '\(name)' of abstract entity '\(entity.name)' would name one index in each entity that extends it; name the index in each of them, or leave it unnamed",
                        at: location)
                } else if !IdentifierRule.isIdentifier(name) || !name.unicodeScalars.allSatisfy(\.isASCII) {
                    diagnostics.error(
                        "index name '\(name)' of '\(entity.name)' is not a valid name; use ASCII letters, digits and '_', not starting with a digit",
                        at: location)
                } else if let reserved = TableNameRule.reservedPrefix(of: name) {
                    let owner = reserved.prefix == "sqlite_" ? "SQLite reserves" : "the Strata store reserves for its own indexes"
                    diagnostics.error(
                        "index name '\(name)' of '\(entity.name)' starts with '\(reserved.prefix)', which \(owner); rename it",
                        at: location)
                } else if let table = tables[key] {
                    diagnostics.error(
                        "index name '\(name)' of '\(entity.name)' clashes with \(table); SQLite keeps tables and indexes under one namespace, ignoring case",
                        at: location)
                } else if let other = seen[key] {
                    diagnostics.error(
                        "index name '\(name)' of '\(entity.name)' is already the name of an index of '\(other.entity)'"
                            + (other.name == name ? "" : " ('\(other.name)'; SQLite index names ignore case)")
                            + "; index names are unique in the whole model",
                        at: location)
                    diagnostics.append(Diagnostic(.note, "'\(other.name)' is first declared here", at: other.location))
                } else {
                    seen[key] = (name, entity.name, location)
                }
            }
        }
    }
}
