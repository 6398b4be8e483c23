/// Table names must stay apart in SQLite, which compares names without regard to case and
/// reserves some prefixes: entity tables and join tables may not differ only by case, and may
/// not start with `sqlite_` (SQLite's own tables) or `strata_` (the store's own tables).
struct TableNameRule: SchemaRule {
    /// Prefixes of table names that belong to someone else, and to whom.
    static let reservedPrefixes: [(prefix: String, owner: String)] = [
        ("sqlite_", "SQLite reserves for its own tables"),
        ("strata_", "the Strata store reserves for its own tables (strata_metadata, strata_join_log, ...)"),
    ]

    /// The reserved prefix `name` starts with (ignoring case), if any.
    static func reservedPrefix(of name: String) -> (prefix: String, owner: String)? {
        let lowered = name.lowercased()
        return reservedPrefixes.first { lowered.hasPrefix($0.prefix) }
    }

    static func check(_ context: ValidationContext, _ diagnostics: inout DiagnosticBag) {
        let schema = context.schema
        // Lowercased table name → (exact name, what it is).
        var tables: [String: (name: String, owner: String, location: SourceLocation)] = [:]
        for entity in schema.entities {
            if let reserved = reservedPrefix(of: entity.name) {
                diagnostics.error(
                    "entity name '\(entity.name)' starts with '\(reserved.prefix)', which \(reserved.owner); rename it",
                    at: entity.location)
            }
            let key = entity.name.lowercased()
            if let other = tables[key] {
                // Exact duplicates are reported by the decoder.
                if other.name != entity.name {
                    diagnostics.error(
                        "entity '\(entity.name)' and entity '\(other.name)' differ only by case, but SQLite table names ignore case; rename one",
                        at: entity.location)
                    diagnostics.append(Diagnostic(.note, "'\(other.name)' is declared here", at: other.location))
                }
            } else {
                tables[key] = (entity.name, "entity '\(entity.name)'", entity.location)
            }
        }
        let layout = StorageLayout(schema: schema)
        var reported: Set<String> = []
        for entity in schema.entities {
            for relationship in entity.relationships {
                guard case .joinTable(let name, _, _) = layout.storage(of: relationship, in: entity) else { continue }
                let mine = "join table of '\(entity.name).\(relationship.name)'"
                let inverse = "join table of '\(relationship.destination).\(relationship.inverse)'"
                if let other = tables[name.lowercased()] {
                    // Both sides of a many-to-many name the same table.
                    if other.name == name && (other.owner == mine || other.owner == inverse) { continue }
                    // Reported once, at the first side.
                    guard reported.insert(name).inserted else { continue }
                    let byCase = other.name == name ? "" : " (SQLite table names ignore case)"
                    diagnostics.error(
                        "the join table '\(name)' of relationship '\(relationship.name)' clashes with \(other.owner)\(byCase); rename the relationship",
                        at: relationship.location)
                } else {
                    tables[name.lowercased()] = (name, mine, relationship.location)
                    if let reserved = reservedPrefix(of: name) {
                        diagnostics.error(
                            "the join table '\(name)' of relationship '\(relationship.name)' starts with '\(reserved.prefix)', which \(reserved.owner); rename the relationship",
                            at: relationship.location)
                    }
                }
            }
        }
    }
}

/// Column names of one table must stay apart in SQLite too: they may not differ only by case
/// (`name` and `Name`, `notebookid` and the foreign key `notebookID`, `Id` and the primary key
/// `id`), and may not be `rowid`, `oid` or `_rowid_`, SQLite's names for the row's key.
struct ColumnNameRule: SchemaRule {
    /// SQLite's aliases of the rowid, lowercased.
    static let rowidAliases: Set<String> = ["rowid", "oid", "_rowid_"]

    static func check(_ context: ValidationContext, _ diagnostics: inout DiagnosticBag) {
        let layout = StorageLayout(schema: context.schema)
        for entity in context.schema.entities {
            // (column, what declares it, location, inherited), in declaration order. Clashes
            // between inherited attributes are reported once, on their abstract entity.
            var columns: [(column: String, owner: String, location: SourceLocation, inherited: Bool)] =
                entity.attributes.map { ($0.name, "attribute '\($0.name)'", $0.location, $0.inheritedFrom != nil) }
            for relationship in entity.relationships {
                if let column = layout.foreignKeyColumn(of: relationship, in: entity) {
                    columns.append((column, "foreign key column '\(column)' of relationship '\(relationship.name)'", relationship.location, false))
                }
                if let column = layout.positionColumn(of: relationship, in: entity) {
                    columns.append((column, "position column '\(column)' of relationship '\(relationship.name)'", relationship.location, false))
                }
            }
            columns.sort { $0.location < $1.location }
            let key = entity.primaryKey
            var seen: [String: (column: String, owner: String, location: SourceLocation, inherited: Bool)] = [
                key.lowercased(): (key, "primary key column '\(key)'", entity.location, false)
            ]
            if rowidAliases.contains(key.lowercased()) {
                diagnostics.error(
                    "the primary key of '\(entity.name)' is named like SQLite's rowid ('rowid', 'oid' and '_rowid_' in any case); choose another name",
                    at: context.location(.entity(entity.name, .primaryKey), or: entity.location))
            }
            for entry in columns {
                let key = entry.column.lowercased()
                if rowidAliases.contains(key) {
                    if entry.inherited { continue }
                    diagnostics.error(
                        "the \(entry.owner) of '\(entity.name)' is named like SQLite's rowid ('rowid', 'oid' and '_rowid_' in any case); rename it",
                        at: entry.location)
                    continue
                }
                if let other = seen[key] {
                    // Exact clashes are reported by MemberNameRule.
                    if other.column != entry.column, !(entry.inherited && other.inherited) {
                        diagnostics.error(
                            "the \(entry.owner) of '\(entity.name)' differs from the \(other.owner) only by case, but SQLite column names ignore case; rename one",
                            at: entry.location)
                    }
                } else {
                    seen[key] = entry
                }
            }
        }
    }
}
