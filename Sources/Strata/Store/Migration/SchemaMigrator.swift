import GRDB

/// Creates a store's schema, or migrates the one in the file to the app's, in one
/// transaction. See <doc:DeleteRulesAndMigrations>.
///
/// Deciding is apart from writing: ``step(_:)`` only reads, so a store can decide on a
/// connection that does not write, and refuse a file without changing it; ``migrate(_:)``
/// decides again inside its write transaction, and applies.
///
/// Plan: entities and attributes are matched by name, then by `renamedFrom`; relationships
/// likewise (their foreign key column or join table moves with them). Destructive changes
/// are collected first and refused before anything is written, unless data loss is
/// allowed. A table whose definition changed is rebuilt (create, copy, drop, rename, with
/// foreign keys off during the transaction and checked before committing); indexes and
/// triggers are brought in line with the schema; the metadata row is rewritten.
struct SchemaMigrator {
    static let metadataTable = "strata_metadata"

    let schema: SchemaDescriptor
    let allowDataLoss: Bool

    /// What opening a database takes.
    enum Step {
        /// Nothing: the database holds the schema, with the indexes and triggers it wants.
        case upToDate
        /// The database is empty: create the schema.
        case create
        /// The same model, with indexes or triggers that an earlier version of Strata
        /// generated (a fixed delete rule, say): bring them in line.
        case syncIndexesAndTriggers
        /// Another model, changed in ways that are applied: migrate.
        case migrate(MigrationPlan)

        /// Whether the step writes.
        var writes: Bool {
            if case .upToDate = self { return false }
            return true
        }
    }

    /// Decides what opening `db` takes, reading only. Throws a ``MigrationError`` for a
    /// database the store refuses: one that is not a Strata store, whose metadata cannot be
    /// read, or whose model would change destructively when data loss is not allowed.
    func step(_ db: Database) throws -> Step {
        let hasTables = try Int.fetchOne(
            db, sql: "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'") ?? 0 > 0
        guard try db.tableExists(Self.metadataTable) else {
            if hasTables { throw MigrationError.notAStrataStore }
            return .create
        }
        let metadata = try readMetadata(db)
        let canonical = CanonicalSchema(schema)
        if metadata["hash"] == canonical.versionHash {
            return try isInLine(db) && HistoryTable.exists(db) ? .upToDate : .syncIndexesAndTriggers
        }
        guard let json = metadata["schema"], let old = CanonicalSchema.decode(json)?.descriptor else {
            throw MigrationError.unreadableMetadata
        }
        let plan = MigrationPlan(old: old, new: schema)
        if !plan.destructiveChanges.isEmpty && !allowDataLoss {
            throw MigrationError.destructiveChanges(plan.destructiveChanges)
        }
        return .migrate(plan)
    }

    /// The metadata table's text values by key; ``MigrationError/unreadableMetadata`` when
    /// the table does not have the shape Strata gives it.
    private func readMetadata(_ db: Database) throws -> [String: String] {
        let rows: [Row]
        do {
            rows = try Row.fetchAll(db, sql: "SELECT key, value FROM \(Self.metadataTable)")
        } catch let error as DatabaseError where error.resultCode == .SQLITE_ERROR {
            throw MigrationError.unreadableMetadata
        }
        var metadata: [String: String] = [:]
        for row in rows {
            guard let key = String.fromDatabaseValue(row[0]), let value = String.fromDatabaseValue(row[1]) else {
                throw MigrationError.unreadableMetadata
            }
            metadata[key] = value
        }
        return metadata
    }

    /// Brings the database of `writer` to the schema, in one immediate transaction that
    /// decides again what it takes (``step(_:)``, with its refusals) before applying it.
    func migrate(_ writer: some DatabaseWriter) throws {
        let canonical = CanonicalSchema(schema)
        try writer.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA foreign_keys = OFF")
            defer { try? db.execute(sql: "PRAGMA foreign_keys = ON") }
            try db.inTransaction(.immediate) {
                switch try step(db) {
                case .upToDate:
                    break
                case .create:
                    try create(db, canonical: canonical)
                case .syncIndexesAndTriggers:
                    // A file made before one-to-ones had unique indexes is checked against
                    // them, and against the required side without the key, once.
                    try syncIndexesAndTriggers(db) { db, addsOneToOnes in
                        if addsOneToOnes { try enforceRules(db, relationshipsOnly: true) }
                    }
                case .migrate(let plan):
                    try apply(plan, db)
                    try writeMetadata(db, canonical: canonical)
                    try db.execute(sql: HistoryTable.createSQL)
                    try recordMigration(plan, db)
                }
                return .commit
            }
        }
    }

    /// Records a migration in the change history as a transaction that invalidates every
    /// table of both models (tables were rebuilt, values filled in): stores of other
    /// processes that are open on the file refetch what they show.
    private func recordMigration(_ plan: MigrationPlan, _ db: Database) throws {
        let tables = Set(SchemaSQL(schema: schema).columnsByTable.keys)
            .union(SchemaSQL(schema: plan.old).columnsByTable.keys)
        _ = try HistoryTable.record(
            CommittedChanges(invalidatedTables: tables), author: HistoryTable.migrationAuthor, writer: 0, db)
    }

    private func create(_ db: Database, canonical: CanonicalSchema) throws {
        let sql = SchemaSQL(schema: schema)
        for entity in schema.entities { try db.execute(sql: sql.createTable(entity)) }
        for join in sql.joinTables { try db.execute(sql: sql.createJoinTable(join)) }
        try syncIndexesAndTriggers(db) { _, _ in }
        try db.execute(sql: "CREATE TABLE \(Self.metadataTable) (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL)")
        try writeMetadata(db, canonical: canonical)
        try db.execute(sql: HistoryTable.createSQL)
    }

    private func writeMetadata(_ db: Database, canonical: CanonicalSchema) throws {
        try db.execute(
            sql: "INSERT OR REPLACE INTO strata_metadata (key, value) VALUES ('schema', ?), ('hash', ?)",
            arguments: [canonical.json, canonical.versionHash])
    }

    /// Drops the store's indexes and triggers that the schema no longer wants (or wants
    /// differently) and creates the missing ones.
    /// `old` is the model the file held, whose named indexes the store also owns.
    /// `enforce` checks the stored rows against the model's rules once every trigger is in
    /// place (so that rows deleted with data loss allowed take their delete rules) and before
    /// the one-to-ones' unique indexes are created; it is told whether any of those is new.
    private func syncIndexesAndTriggers(
        _ db: Database, old: SchemaDescriptor? = nil, enforce: (Database, Bool) throws -> Void
    ) throws {
        try db.execute(sql: HistoryTable.createSQL)
        let (unwanted, missing) = try stale(db, old: old)
        for (name, type) in unwanted.sorted(by: { $0.key < $1.key }) {
            try db.execute(sql: "DROP \(type == "index" ? "INDEX" : "TRIGGER") IF EXISTS \(quoted(name))")
        }
        // In a stable order. A unique index over existing duplicates fails, and so does the
        // whole migration; a one-to-one's duplicates are refused (or deleted) by `enforce`
        // first, with the rows named.
        let oneToOneIndexes = Set(RelationshipChecks(schema: schema).indexes.keys)
        let sorted = missing.sorted(by: { $0.key < $1.key })
        for (name, statement) in sorted where !oneToOneIndexes.contains(name) {
            try db.execute(sql: statement)
        }
        try enforce(db, sorted.contains { oneToOneIndexes.contains($0.key) })
        for (name, statement) in sorted where oneToOneIndexes.contains(name) {
            try db.execute(sql: statement)
        }
    }

    /// The store's indexes and triggers that the schema does not want as they are (name →
    /// type), and the statements of those it wants and are missing (name → SQL).
    ///
    /// The store owns the indexes and triggers named `strata_…` and the indexes the model (or
    /// the file's older model, `old`) names itself; others, made by raw SQL, are left alone.
    private func stale(_ db: Database, old: SchemaDescriptor? = nil) throws -> (unwanted: [String: String], missing: [String: String]) {
        let sql = SchemaSQL(schema: schema)
        let wanted = sql.indexes.merging(DeleteRuleTriggers(schema: schema).triggers) { $1 }
            .merging(OrderedPositions.triggers(of: schema)) { $1 }
            .merging(RuleTriggers(schema: schema).triggers) { $1 }
        let owned = sql.chosenIndexNames.union(old.map { SchemaSQL(schema: $0).chosenIndexNames } ?? [])
        let existing = try Row.fetchAll(
            db, sql: "SELECT type, name, sql FROM sqlite_master WHERE type IN ('index', 'trigger') AND sql IS NOT NULL")
        var unwanted: [String: String] = [:], missing = wanted
        for row in existing {
            let name: String = row["name"], type: String = row["type"], text: String? = row["sql"]
            guard name.hasPrefix("strata_") || (type == "index" && owned.contains(name)) else { continue }
            if let text, wanted[name] == text {
                missing[name] = nil
            } else {
                unwanted[name] = type
            }
        }
        return (unwanted, missing)
    }

    /// True when the store's indexes and triggers are exactly those the schema wants.
    private func isInLine(_ db: Database) throws -> Bool {
        let (unwanted, missing) = try stale(db)
        return unwanted.isEmpty && missing.isEmpty
    }

    /// Refuses a migration whose model has rules that stored rows break
    /// (``MigrationError/ruleViolations(_:)``), or with data loss allowed deletes those rows
    /// (their delete rules apply), until none is left. With `relationshipsOnly`, only the
    /// one-to-ones and the required to-ones whose key the other side stores are checked.
    private func enforceRules(_ db: Database, relationshipsOnly: Bool = false) throws {
        let rules = RuleTriggers(schema: schema)
        let required = RequiredAtCommit(schema: schema)
        let relationships = RelationshipChecks(schema: schema)
        guard !rules.valueChecks.isEmpty || !rules.countChecks.isEmpty || !required.keys.isEmpty
                || !relationships.oneToOnes.isEmpty
        else { return }
        func violations() throws -> [RuleViolationError] {
            let oneToOnes = try relationships.oneToOneViolations(db)
            if relationshipsOnly { return try oneToOnes + rules.violations(db, requiredToOnesOnly: true) }
            return try rules.violations(db) + required.unset(db, limit: 1_000) + oneToOnes
        }
        for _ in 0..<100 {
            let violations = try violations()
            if violations.isEmpty { return }
            guard allowDataLoss else { throw MigrationError.ruleViolations(violations) }
            for (entity, ids) in Dictionary(grouping: violations, by: \.entity) {
                let list = Set(ids.compactMap(\.id)).sorted().map(String.init).joined(separator: ", ")
                let key = schema.entity(named: entity)?.primaryKey ?? "id"
                try db.execute(sql: "DELETE FROM \(quoted(entity)) WHERE \(quoted(key)) IN (\(list))")
            }
        }
        throw MigrationError.ruleViolations(try violations())
    }

    private func apply(_ plan: MigrationPlan, _ db: Database) throws {
        let newSQL = SchemaSQL(schema: schema)
        let oldSQL = SchemaSQL(schema: plan.old)
        // Triggers refer to tables by name: drop them all, recreate at the end.
        for name in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'strata\\_%' ESCAPE '\\'") {
            try db.execute(sql: "DROP TRIGGER \(quoted(name))")
        }
        for name in plan.removedEntities { try db.execute(sql: "DROP TABLE IF EXISTS \(quoted(name))") }
        for name in plan.removedJoinTables { try db.execute(sql: "DROP TABLE IF EXISTS \(quoted(name))") }

        for entity in schema.entities {
            guard let mapping = plan.entityMappings[entity.name] else {
                try db.execute(sql: newSQL.createTable(entity))
                continue
            }
            let oldEntity = mapping.old
            let oldDDL = oldSQL.createTable(oldEntity, named: entity.name)
            let newDDL = newSQL.createTable(entity)
            if oldEntity.name != entity.name {
                try db.execute(sql: "ALTER TABLE \(quoted(oldEntity.name)) RENAME TO \(quoted(entity.name))")
            }
            // Unchanged when the table is declared the same way and every column keeps the
            // values of the old column of its name, untransformed.
            if oldDDL == newDDL && mapping.columnSources.allSatisfy({ $0.value.expression == quoted($0.key) }) { continue }
            // Rebuild.
            let temporary = "strata_new_\(entity.name)"
            try db.execute(sql: newSQL.createTable(entity, named: temporary))
            // The primary key keeps every row's id, whatever either model names it.
            var targets: [String] = [quoted(entity.primaryKey)], sources: [String] = [quoted(oldEntity.primaryKey)]
            for (column, source) in mapping.columnSources.sorted(by: { $0.key < $1.key }) {
                guard let expression = source.expression else { continue }
                targets.append(quoted(column))
                sources.append(expression)
            }
            try db.execute(sql: """
                INSERT INTO \(quoted(temporary)) (\(targets.joined(separator: ", "))) \
                SELECT \(sources.joined(separator: ", ")) FROM \(quoted(entity.name))
                """)
            try db.execute(sql: "DROP TABLE \(quoted(entity.name))")
            try db.execute(sql: "ALTER TABLE \(quoted(temporary)) RENAME TO \(quoted(entity.name))")
        }

        for join in newSQL.joinTables {
            guard let old = plan.joinMappings[join.name] else {
                try db.execute(sql: newSQL.createJoinTable(join))
                continue
            }
            let sameShape = old.table.name == join.name
                && oldSQL.createJoinTable(old.table) == newSQL.createJoinTable(join)
                && old.swapped == false
            if sameShape { continue }
            let temporary = "strata_new_\(join.name)"
            try db.execute(sql: newSQL.createJoinTable(join, named: temporary))
            let (source, inverseSource) = old.swapped
                ? (old.table.inverseColumn, old.table.column) : (old.table.column, old.table.inverseColumn)
            try db.execute(sql: """
                INSERT OR IGNORE INTO \(quoted(temporary)) (\(quoted(join.column)), \(quoted(join.inverseColumn))) \
                SELECT \(quoted(source)), \(quoted(inverseSource)) FROM \(quoted(old.table.name))
                """)
            try db.execute(sql: "DROP TABLE \(quoted(old.table.name))")
            try db.execute(sql: "ALTER TABLE \(quoted(temporary)) RENAME TO \(quoted(join.name))")
        }

        try OrderedPositions.assignInitialPositions(db, schema: schema, old: plan.old)
        try syncIndexesAndTriggers(db, old: plan.old) { db, _ in try enforceRules(db) }
        if let violation = try Row.fetchOne(db, sql: "PRAGMA foreign_key_check") {
            throw MigrationError.foreignKeyViolations(table: violation[0])
        }
    }
}

/// The differences between the model stored in a file and the app's.
struct MigrationPlan {
    struct ColumnSource {
        /// The SQL selecting the value from the old table; nil lets the column's DEFAULT apply.
        var expression: String?
    }

    struct EntityMapping {
        var old: EntityDescriptor
        /// New column → where its values come from.
        var columnSources: [String: ColumnSource]
    }

    struct JoinMapping {
        var table: SchemaSQL.JoinTable
        /// The old table's `column` is the new table's `inverseColumn`.
        var swapped: Bool
    }

    let old: SchemaDescriptor
    var entityMappings: [String: EntityMapping] = [:]
    var joinMappings: [String: JoinMapping] = [:]
    var removedEntities: [String] = []
    var removedJoinTables: [String] = []
    var destructiveChanges: [DestructiveChange] = []

    init(old: SchemaDescriptor, new: SchemaDescriptor) {
        self.old = old
        var usedOldEntities: Set<String> = []
        var usedOldJoinTables: Set<String> = []
        let oldJoinTables = SchemaSQL(schema: old).joinTables

        for entity in new.entities {
            guard let oldEntity = old.entity(named: entity.name)
                    ?? entity.renamedFrom.flatMap({ old.entity(named: $0) }),
                  !usedOldEntities.contains(oldEntity.name)
            else { continue }
            usedOldEntities.insert(oldEntity.name)
            var sources: [String: ColumnSource] = [:]
            var usedOldAttributes: Set<String> = []
            for attribute in entity.attributes {
                let oldAttribute = oldEntity.attribute(named: attribute.name)
                    ?? attribute.renamedFrom.flatMap { oldEntity.attribute(named: $0) }
                guard let oldAttribute else {
                    if attribute.isOptional || attribute.defaultValue != nil {
                        sources[attribute.name] = ColumnSource(expression: nil)
                    } else {
                        destructiveChanges.append(.newRequiredAttribute(entity: entity.name, attribute: attribute.name))
                        sources[attribute.name] = ColumnSource(expression: SchemaSQL.zeroLiteral(attribute.type))
                    }
                    continue
                }
                usedOldAttributes.insert(oldAttribute.name)
                let fallback = attribute.isOptional
                    ? "NULL"
                    : attribute.defaultValue.map { SchemaSQL.defaultSQL($0) } ?? SchemaSQL.zeroLiteral(attribute.type)
                if !Self.sameStorage(oldAttribute.type, attribute.type) {
                    destructiveChanges.append(.changedType(entity: entity.name, attribute: attribute.name))
                    sources[attribute.name] = ColumnSource(expression: fallback)
                    continue
                }
                var expression = quoted(oldAttribute.name)
                let removedCases = Self.removedCases(from: oldAttribute.type, to: attribute.type)
                if !removedCases.isEmpty {
                    // Stored values of those cases would no longer decode: they take the
                    // fallback (a transformed column rebuilds the table).
                    destructiveChanges.append(
                        .removedEnumCases(entity: entity.name, attribute: attribute.name, cases: removedCases))
                    let list = removedCases.map { SchemaSQL.literal($0.databaseValue) }.joined(separator: ", ")
                    expression = "CASE WHEN \(expression) IN (\(list)) THEN \(fallback) ELSE \(expression) END"
                }
                if oldAttribute.isOptional && !attribute.isOptional {
                    destructiveChanges.append(.madeRequired(entity: entity.name, attribute: attribute.name))
                    expression = "COALESCE(\(expression), \(fallback))"
                }
                sources[attribute.name] = ColumnSource(expression: expression)
            }
            for attribute in oldEntity.attributes where !usedOldAttributes.contains(attribute.name) {
                destructiveChanges.append(.removedAttribute(entity: entity.name, attribute: attribute.name))
            }

            var usedOldRelationships: Set<String> = []
            for relationship in entity.relationships {
                let oldRelationship = oldEntity.relationship(named: relationship.name)
                    ?? relationship.renamedFrom.flatMap { oldEntity.relationship(named: $0) }
                if let oldRelationship { usedOldRelationships.insert(oldRelationship.name) }
                switch relationship.storage {
                case .foreignKey(let column):
                    if let oldRelationship, case .foreignKey(let oldColumn) = oldRelationship.storage {
                        sources[column] = ColumnSource(expression: quoted(oldColumn))
                        if relationship.isRequired && !oldRelationship.isRequired {
                            // Objects without a destination would violate NOT NULL.
                            destructiveChanges.append(.madeRequired(entity: entity.name, attribute: relationship.name))
                        }
                    } else if relationship.isRequired {
                        destructiveChanges.append(.newRequiredRelationship(entity: entity.name, relationship: relationship.name))
                        sources[column] = ColumnSource(expression: "0")
                    } else {
                        sources[column] = ColumnSource(expression: nil)
                    }
                    if let position = relationship.positionColumn {
                        // Kept when the relationship was ordered; otherwise NULL, then the
                        // initial order (OrderedPositions.assignInitialPositions).
                        let oldPosition = oldRelationship.flatMap { old in
                            if case .foreignKey = old.storage { return old.positionColumn }
                            return nil
                        }
                        sources[position] = ColumnSource(expression: oldPosition.map(quoted))
                    }
                    if let oldPosition = oldRelationship?.positionColumn, relationship.positionColumn == nil {
                        // The relationship is no longer ordered: the stored order goes.
                        destructiveChanges.append(.removedAttribute(entity: entity.name, attribute: oldPosition))
                    }
                case .joinTable(let name, _, _):
                    if let oldRelationship, case .foreignKey = oldRelationship.storage {
                        // A to-one became a to-many: its foreign key column (and links) go.
                        destructiveChanges.append(.removedRelationship(entity: entity.name, relationship: oldRelationship.name))
                    }
                    guard let oldRelationship, case .joinTable(let oldName, let oldColumn, _) = oldRelationship.storage,
                          let table = oldJoinTables.first(where: { $0.name == oldName }),
                          joinMappings[name] == nil
                    else { continue }
                    // The new join table as SchemaSQL describes it (from its first side).
                    let newTable = SchemaSQL(schema: new).joinTables.first { $0.name == name }
                    let newSideIsColumn = newTable?.entity == entity.name && {
                        if case .joinTable(_, let c, _) = relationship.storage { return c == newTable?.column }
                        return false
                    }()
                    let oldSideIsColumn = table.column == oldColumn && table.entity == oldEntity.name
                    joinMappings[name] = JoinMapping(table: table, swapped: newSideIsColumn != oldSideIsColumn)
                    usedOldJoinTables.insert(oldName)
                case .inverseForeignKey:
                    break
                }
            }
            for relationship in oldEntity.relationships where !usedOldRelationships.contains(relationship.name) {
                if case .inverseForeignKey = relationship.storage { continue }
                destructiveChanges.append(.removedRelationship(entity: entity.name, relationship: relationship.name))
            }
            entityMappings[entity.name] = EntityMapping(old: oldEntity, columnSources: sources)
        }
        for entity in old.entities where !usedOldEntities.contains(entity.name) {
            destructiveChanges.append(.removedEntity(entity: entity.name))
            removedEntities.append(entity.name)
        }
        for table in oldJoinTables where !usedOldJoinTables.contains(table.name) {
            removedJoinTables.append(table.name)
            if usedOldEntities.contains(table.entity) && usedOldEntities.contains(table.destination),
               let entity = old.entity(named: table.entity),
               let relationship = entity.relationships.first(where: {
                   if case .joinTable(let name, _, _) = $0.storage { return name == table.name }
                   return false
               }),
               !destructiveChanges.contains(where: {
                   if case .removedRelationship(_, let name) = $0 { return name == relationship.name }
                   return false
               })
            {
                destructiveChanges.append(.removedRelationship(entity: entity.name, relationship: relationship.name))
            }
        }
        // A removed entity's join tables go with it; removed join tables are listed above.
        var seen: Set<DestructiveChange> = []
        destructiveChanges = destructiveChanges.filter { seen.insert($0).inserted }
    }

    /// The cases of enumeration `old` that enumeration `new` no longer has, in order.
    static func removedCases(from old: ValueType, to new: ValueType) -> [String] {
        guard case .enumeration(_, let oldCases) = old, case .enumeration(_, let newCases) = new else { return [] }
        return oldCases.filter { !newCases.contains($0) }
    }

    /// Whether two types store the same way (changing between them keeps the values).
    static func sameStorage(_ a: ValueType, _ b: ValueType) -> Bool {
        switch (a, b) {
        case (.enumeration, .enumeration): return true
        default: return a == b
        }
    }
}
