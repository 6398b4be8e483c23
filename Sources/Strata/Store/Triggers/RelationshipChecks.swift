import GRDB

/// The SQL that keeps relationships whole on every write path: one-to-ones stay one-to-one,
/// and keys point to objects that exist, refused with a ``RuleViolationError`` that names the
/// object.
///
/// - **One-to-one.** The key column of a one-to-one (both sides to-one, or a to-one that is
///   its own inverse) has a unique index stored in the file, `strata_unique_<E>_<column>`:
///   every program writing the file is held to it (SQLite's `UNIQUE constraint failed`).
///   For a key checked at commit (see ``RequiredAtCommit``), "not set" is 0, which many
///   objects may hold at once, so the index leaves 0 out (`WHERE "ownerID" <> 0`) and the
///   key keeps its plain index for lookups; otherwise the unique index replaces it. On the
///   store's writer a TEMP trigger (`strata_onetoonewatch_…`, `BEFORE INSERT` and
///   `BEFORE UPDATE OF` the key, so before the index refuses the row) fails the statement
///   first with ``RuleViolationError/Rule/oneToOne(_:)``, naming the object (its id is not
///   known yet when SQLite chooses it) and the relationship.
/// - **Keys checked by each statement.** SQLite checks a foreign key at the end of the
///   statement, and its message names nothing. On the store's writer, TEMP triggers
///   (`strata_keywatch_…`, `AFTER INSERT` and `AFTER UPDATE OF` the key) fail the statement
///   first when the key points to no object: ``RuleViolationError/Rule/required`` for a
///   required key that is 0 (``EntityID/unsaved``),
///   ``RuleViolationError/Rule/missingDestination(_:)`` otherwise. Join tables get the same
///   triggers on both columns. A statement that writes several rows of one table, one of
///   them pointing to a row that a later one inserts, is therefore refused on the store's
///   writer, where SQLite alone would accept it.
/// - **Keys checked at commit.** A key that may point to a missing object until the
///   transaction ends (a cycle of required to-ones) is noted by a TEMP trigger when it is
///   written so; ``Store/write(_:)`` looks at the noted objects again before it commits and
///   throws ``RuleViolationError/Rule/missingDestination(_:)`` for one still dangling.
struct RelationshipChecks {
    let schema: SchemaDescriptor

    /// The key of a one-to-one, stored in `entity`'s table.
    struct OneToOne {
        var entity: String
        var relationship: String
        var column: String
        /// The inverse as `Entity.relationship`.
        var inverse: String
        /// The entity's primary key column, quoted.
        var key: String
        /// True when the key is checked at commit: 0 means "not set", and is left out.
        var isCheckedAtCommit: Bool

        var indexName: String { "strata_unique_\(entity)_\(column)" }

        var indexSQL: String {
            "CREATE UNIQUE INDEX \(quoted(indexName)) ON \(quoted(entity))(\(quoted(column)))"
                + (isCheckedAtCommit ? " WHERE \(quoted(column)) <> 0" : "")
        }

        /// The condition under which the key `value` (an SQL expression) needs checking.
        func isSet(_ value: String) -> String {
            "\(value) IS NOT NULL" + (isCheckedAtCommit ? " AND \(value) <> 0" : "")
        }
    }

    /// Every one-to-one key of the schema, in declaration order.
    var oneToOnes: [OneToOne] {
        let required = RequiredAtCommit(schema: schema)
        var result: [OneToOne] = []
        for entity in schema.entities {
            for relationship in entity.relationships where !relationship.isToMany {
                guard case .foreignKey(let column) = relationship.storage,
                      let inverse = schema.entity(named: relationship.destination)?.relationship(named: relationship.inverse),
                      !inverse.isToMany
                else { continue }
                result.append(OneToOne(
                    entity: entity.name, relationship: relationship.name, column: column,
                    inverse: relationship.destination + "." + relationship.inverse, key: quoted(entity.primaryKey),
                    isCheckedAtCommit: required.isCheckedAtCommit(relationship, of: entity)))
            }
        }
        return result
    }

    /// Whether the key `column` of `entity` is the key of a one-to-one.
    func oneToOne(entity: String, column: String) -> OneToOne? {
        oneToOnes.first { $0.entity == entity && $0.column == column }
    }

    // MARK: - Keys

    /// A to-one stored as a foreign key that references its destination, or one column of a
    /// join table.
    struct Key {
        /// The table holding the key, and the column.
        var table: String
        var column: String
        /// The destination entity and its primary key column, quoted.
        var destination: String
        var destinationKey: String
        /// The object the error names: its entity, the SQL of its id (`NEW."id"`), and the
        /// relationship.
        var entity: String
        var id: String
        var relationship: String
        var isRequired: Bool
        var isCheckedAtCommit: Bool
    }

    /// Every key that SQLite checks with a foreign key constraint.
    var keys: [Key] {
        let sql = SchemaSQL(schema: schema)
        let required = RequiredAtCommit(schema: schema)
        var result: [Key] = []
        for entity in schema.entities {
            for (relationship, column) in SchemaSQL.foreignKeys(of: entity) where !sql.inverseAllowsDangling(relationship, of: entity) {
                result.append(Key(
                    table: entity.name, column: column, destination: relationship.destination,
                    destinationKey: quoted(sql.key(of: relationship.destination)), entity: entity.name,
                    id: "NEW.\(quoted(entity.primaryKey))", relationship: relationship.name,
                    isRequired: relationship.isRequired,
                    isCheckedAtCommit: required.isCheckedAtCommit(relationship, of: entity)))
            }
        }
        for join in sql.joinTables {
            // Each column references its entity unless that entity's side has `noAction`; a
            // missing object on one side is named from the other side's relationship.
            let sides = [
                (column: join.column, entity: join.entity, other: join.destination, otherColumn: join.inverseColumn),
                (column: join.inverseColumn, entity: join.destination, other: join.entity, otherColumn: join.column),
            ]
            for side in sides {
                guard let own = joinRelationship(of: side.entity, join.name, column: side.column), own.deleteRule != .noAction,
                      let other = joinRelationship(of: side.other, join.name, column: side.otherColumn)
                else { continue }
                result.append(Key(
                    table: join.name, column: side.column, destination: side.entity,
                    destinationKey: quoted(sql.key(of: side.entity)), entity: side.other,
                    id: "NEW.\(quoted(side.otherColumn))", relationship: other.name,
                    isRequired: false, isCheckedAtCommit: false))
            }
        }
        return result
    }

    /// The relationship of `entity` that stores its own objects' ids in `column` of join
    /// table `name` (for a relationship that is its own inverse, the one that uses it).
    private func joinRelationship(of entity: String, _ name: String, column: String) -> RelationshipDescriptor? {
        guard let entity = schema.entity(named: entity) else { return nil }
        func uses(_ relationship: RelationshipDescriptor, column: String?) -> Bool {
            guard case .joinTable(let table, let own, _) = relationship.storage, table == name else { return false }
            return column == nil || own == column
        }
        return entity.relationships.first { uses($0, column: column) } ?? entity.relationships.first { uses($0, column: nil) }
    }

    // MARK: - Triggers

    /// Index name → `CREATE UNIQUE INDEX` statement: the one-to-ones' unique indexes.
    var indexes: [String: String] {
        var result: [String: String] = [:]
        for oneToOne in oneToOnes { result[oneToOne.indexName] = oneToOne.indexSQL }
        return result
    }

    /// Trigger name → `CREATE TEMP TRIGGER` statement, for the store's writer connection.
    var watches: [String: String] {
        var result: [String: String] = [:]
        let broken = RuleWatch.brokenFunctionName
        for oneToOne in oneToOnes {
            let column = quoted(oneToOne.column)
            let arguments = [oneToOne.entity, oneToOne.relationship, "oneToOne", oneToOne.inverse]
                .map { SchemaSQL.literal($0.databaseValue) }
            let taken = """
                \(oneToOne.isSet("NEW.\(column)")) AND EXISTS (SELECT 1 FROM main.\(quoted(oneToOne.entity)) \
                WHERE \(column) = NEW.\(column) AND \(oneToOne.key) IS NOT NEW.\(oneToOne.key))
                """
            // In a BEFORE INSERT trigger, the id SQLite has yet to choose reads -1.
            for (event, suffix, id) in [
                ("INSERT", "insert", "NULLIF(NEW.\(oneToOne.key), -1)"),
                ("UPDATE OF \(column)", "update", "NEW.\(oneToOne.key)"),
            ] {
                let name = "strata_onetoonewatch_\(oneToOne.entity)_\(oneToOne.relationship)_\(suffix)"
                result[name] = """
                    CREATE TEMP TRIGGER IF NOT EXISTS \(quoted(name)) BEFORE \(event) ON main.\(quoted(oneToOne.entity)) \
                    WHEN \(taken) BEGIN \
                    SELECT \(broken)(\(arguments[0]), \(id), \(arguments[1]), \(arguments[2]), \(arguments[3])); END
                    """
            }
        }
        for key in keys {
            let column = quoted(key.column)
            let missing = """
                NEW.\(column) IS NOT NULL\(key.isCheckedAtCommit ? " AND NEW.\(column) <> 0" : "") \
                AND NOT EXISTS (SELECT 1 FROM main.\(quoted(key.destination)) WHERE \(key.destinationKey) = NEW.\(column))
                """
            let entity = SchemaSQL.literal(key.entity.databaseValue)
            let relationship = SchemaSQL.literal(key.relationship.databaseValue)
            let action: String
            if key.isCheckedAtCommit {
                action = "SELECT \(RuleWatch.danglingFunctionName)(\(entity), \(key.id), \(relationship))"
            } else {
                let rule = key.isRequired ? "CASE WHEN NEW.\(column) = 0 THEN 'required' ELSE 'missingDestination' END" : "'missingDestination'"
                action = "SELECT \(broken)(\(entity), \(key.id), \(relationship), \(rule), \(SchemaSQL.literal(key.destination.databaseValue)))"
            }
            for (event, suffix, changed) in [
                ("INSERT", "insert", ""),
                ("UPDATE OF \(column)", "update", " AND NEW.\(column) IS NOT OLD.\(column)"),
            ] {
                let name = "strata_keywatch_\(key.table)_\(key.column)_\(suffix)"
                result[name] = """
                    CREATE TEMP TRIGGER IF NOT EXISTS \(quoted(name)) AFTER \(event) ON main.\(quoted(key.table)) \
                    WHEN \(missing)\(changed) BEGIN \(action); END
                    """
            }
        }
        return result
    }

    // MARK: - Existing rows

    /// The rows that break a one-to-one (for migrations): for each destination that several
    /// objects point to, every one of them but the first by id. At most `limit` per
    /// relationship, in entity and id order.
    func oneToOneViolations(_ db: Database, limit: Int = 1_000) throws -> [RuleViolationError] {
        var result: [RuleViolationError] = []
        for oneToOne in oneToOnes {
            let table = quoted(oneToOne.entity), column = quoted(oneToOne.column), key = oneToOne.key
            let ids = try Int64.fetchAll(db, sql: """
                SELECT o.\(key) FROM \(table) o WHERE \(oneToOne.isSet("o.\(column)")) AND EXISTS \
                (SELECT 1 FROM \(table) p WHERE p.\(column) = o.\(column) AND p.\(key) < o.\(key)) \
                ORDER BY o.\(key) LIMIT \(limit)
                """)
            result += ids.map {
                RuleViolationError(entity: oneToOne.entity, id: $0, member: oneToOne.relationship, rule: .oneToOne(oneToOne.inverse))
            }
        }
        return result
    }

    /// The first object noted with a dangling key checked at commit whose key still points
    /// to no object.
    func firstDangling(_ db: Database, among noted: [(entity: String, id: Int64, relationship: String)]) throws -> RuleViolationError? {
        for note in noted {
            guard let entity = schema.entity(named: note.entity),
                  let relationship = entity.relationship(named: note.relationship),
                  case .foreignKey(let column) = relationship.storage
            else { continue }
            let destination = quoted(relationship.destination)
            let destinationKey = quoted(SchemaSQL(schema: schema).key(of: relationship.destination))
            let dangling = try Bool.fetchOne(db, sql: """
                SELECT EXISTS (SELECT 1 FROM \(quoted(entity.name)) o WHERE o.\(quoted(entity.primaryKey)) = ? \
                AND o.\(quoted(column)) <> 0 AND NOT EXISTS (SELECT 1 FROM \(destination) d WHERE d.\(destinationKey) = o.\(quoted(column))))
                """, arguments: [note.id]) ?? false
            if dangling {
                return RuleViolationError(
                    entity: entity.name, id: note.id, member: relationship.name, rule: .missingDestination(relationship.destination))
            }
        }
        return nil
    }
}
