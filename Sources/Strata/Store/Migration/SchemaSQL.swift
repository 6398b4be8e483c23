import Foundation
import GRDB

/// The SQL of a ``SchemaDescriptor``: tables, join tables, indexes and delete-rule triggers.
///
/// Layout:
/// - one table per entity: its primary key (`"id" INTEGER PRIMARY KEY` unless the model
///   names it), then one column per attribute
///   (`NOT NULL` unless optional, with its `DEFAULT`), then one column per to-one
///   relationship stored here (`REFERENCES` the destination, unless the destination's
///   inverse relationship has the ``DeleteRule/noAction`` rule, which allows dangling
///   references; `NOT NULL` when required);
/// - one rowid table per many-to-many join table, its two columns `NOT NULL`, each
///   `REFERENCES` its entity unless that entity's side has the `noAction` rule, with
///   `UNIQUE(column, inverseColumn)` and an index on the inverse column;
/// - indexes (`strata_index_…`, `_desc` after a descending column; or the name the model
///   chose) for `indexes`, indexed attributes and every foreign key column, unique indexes
///   (`strata_unique_…`) for `unique` constraints and for the key of every one-to-one
///   (see ``RelationshipChecks``; it replaces the key's plain index, except for a key
///   checked at commit, whose unique index leaves out 0);
/// - for a to-one whose inverse is ordered, a position column `INTEGER` after the foreign
///   keys, and an index over (foreign key, position);
/// - delete rules as triggers (``DeleteRuleTriggers``), and the triggers that give a new
///   or re-parented child the last place (``OrderedPositions/triggers(of:)``).
struct SchemaSQL {
    let schema: SchemaDescriptor

    /// Every join table, once, described from the side that lists it first.
    struct JoinTable: Hashable {
        var name: String
        var entity: String
        var column: String
        var destination: String
        var inverseColumn: String
    }

    var joinTables: [JoinTable] {
        var seen: Set<String> = []
        var result: [JoinTable] = []
        for entity in schema.entities {
            for relationship in entity.relationships {
                guard case .joinTable(let name, let column, let inverseColumn) = relationship.storage,
                      seen.insert(name).inserted
                else { continue }
                result.append(JoinTable(
                    name: name, entity: entity.name, column: column,
                    destination: relationship.destination, inverseColumn: inverseColumn))
            }
        }
        return result
    }

    /// The to-one relationships stored in `entity`'s table, with their column.
    static func foreignKeys(of entity: EntityDescriptor) -> [(RelationshipDescriptor, String)] {
        entity.relationships.compactMap {
            if case .foreignKey(let column) = $0.storage { return ($0, column) }
            return nil
        }
    }

    /// The to-one relationships of `entity` whose inverse is ordered: their foreign key
    /// column and the column holding each object's place among its siblings.
    static func positionColumns(of entity: EntityDescriptor) -> [(relationship: RelationshipDescriptor, foreignKey: String, position: String)] {
        entity.relationships.compactMap {
            if case .foreignKey(let column) = $0.storage, let position = $0.positionColumn { return ($0, column, position) }
            return nil
        }
    }

    /// Every column of every table (for change events).
    var columnsByTable: [String: [String]] {
        var result: [String: [String]] = [:]
        for entity in schema.entities {
            result[entity.name] = [entity.primaryKey] + entity.attributes.map(\.name) + Self.foreignKeys(of: entity).map(\.1)
                + Self.positionColumns(of: entity).map(\.position)
        }
        for join in joinTables { result[join.name] = [join.column, join.inverseColumn] }
        return result
    }

    // MARK: - Tables

    /// The primary key column of the entity called `name`.
    func key(of name: String) -> String { schema.entity(named: name)?.primaryKey ?? "id" }

    func createTable(_ entity: EntityDescriptor, named tableName: String? = nil) -> String {
        var columns = ["\(quoted(entity.primaryKey)) INTEGER PRIMARY KEY"]
        for attribute in entity.attributes {
            var column = "\(quoted(attribute.name)) \(Self.sqlType(attribute.type))"
            if !attribute.isOptional { column += " NOT NULL" }
            if let defaultValue = attribute.defaultValue { column += " DEFAULT \(Self.defaultSQL(defaultValue))" }
            columns.append(column)
        }
        let requiredAtCommit = RequiredAtCommit(schema: schema)
        for (relationship, column) in Self.foreignKeys(of: entity) {
            var definition = "\(quoted(column)) INTEGER"
            if relationship.isRequired { definition += " NOT NULL" }
            if !inverseAllowsDangling(relationship, of: entity) {
                definition += " REFERENCES \(quoted(relationship.destination))(\(quoted(key(of: relationship.destination))))"
                if requiredAtCommit.isCheckedAtCommit(relationship, of: entity) {
                    definition += " DEFERRABLE INITIALLY DEFERRED"
                }
            }
            columns.append(definition)
        }
        for (_, _, position) in Self.positionColumns(of: entity) {
            columns.append("\(quoted(position)) INTEGER")
        }
        return "CREATE TABLE \(quoted(tableName ?? entity.name)) (\(columns.joined(separator: ", ")))"
    }

    func createJoinTable(_ join: JoinTable, named tableName: String? = nil) -> String {
        let entity = schema.entity(named: join.entity)
        let destination = schema.entity(named: join.destination)
        // Each column's side is the relationship that stores its own objects in it: with a
        // self-referencing many-to-many, both sides are relationships of the same entity.
        let sideRule = joinRelationship(of: entity, join.name, column: join.column)?.deleteRule
        let inverseRule = joinRelationship(of: destination, join.name, column: join.inverseColumn)?.deleteRule
        var column = "\(quoted(join.column)) INTEGER NOT NULL"
        if sideRule != .noAction { column += " REFERENCES \(quoted(join.entity))(\(quoted(key(of: join.entity))))" }
        var inverseColumn = "\(quoted(join.inverseColumn)) INTEGER NOT NULL"
        if inverseRule != .noAction { inverseColumn += " REFERENCES \(quoted(join.destination))(\(quoted(key(of: join.destination))))" }
        return """
            CREATE TABLE \(quoted(tableName ?? join.name)) (\(column), \(inverseColumn), \
            UNIQUE(\(quoted(join.column)), \(quoted(join.inverseColumn))))
            """
    }

    private func isJoin(_ relationship: RelationshipDescriptor, _ name: String) -> Bool {
        if case .joinTable(let table, _, _) = relationship.storage { return table == name }
        return false
    }

    /// The relationship of `entity` that stores, in join table `name`, its own objects'
    /// ids in `column` (or, for a relationship that is its own inverse, the one that uses
    /// the table).
    private func joinRelationship(of entity: EntityDescriptor?, _ name: String, column: String) -> RelationshipDescriptor? {
        guard let entity else { return nil }
        return entity.relationships.first {
            if case .joinTable(let table, let own, _) = $0.storage { return table == name && own == column }
            return false
        } ?? entity.relationships.first { isJoin($0, name) }
    }

    /// True when the destination's inverse relationship has the `noAction` rule: deleting a
    /// destination object leaves this foreign key dangling, so it has no constraint.
    func inverseAllowsDangling(_ relationship: RelationshipDescriptor, of entity: EntityDescriptor) -> Bool {
        schema.entity(named: relationship.destination)?.relationship(named: relationship.inverse)?.deleteRule == .noAction
    }

    // MARK: - Indexes

    /// Index name → `CREATE INDEX` statement, for every index the schema wants.
    var indexes: [String: String] {
        var result: [String: String] = [:]
        let oneToOnes = RelationshipChecks(schema: schema).oneToOnes
        func add(_ table: String, _ columns: [IndexColumn], unique: Bool, name chosen: String? = nil) {
            guard !columns.isEmpty else { return }
            let generated = (unique ? "strata_unique_" : "strata_index_")
                + ([table] + columns.map { $0.isDescending ? $0.name + "_desc" : $0.name }).joined(separator: "_")
            let name = chosen ?? generated
            let list = columns.map { quoted($0.name) + ($0.isDescending ? " DESC" : "") }.joined(separator: ", ")
            result[name] = "CREATE \(unique ? "UNIQUE " : "")INDEX \(quoted(name)) ON \(quoted(table))(\(list))"
        }
        func add(_ table: String, _ columns: [String], unique: Bool) {
            add(table, columns.map { IndexColumn($0) }, unique: unique)
        }
        for entity in schema.entities {
            for index in entity.indexes { add(entity.name, index.columns, unique: false, name: index.name) }
            for columns in entity.uniques { add(entity.name, columns, unique: true) }
            for attribute in entity.attributes {
                if attribute.isIndexed { add(entity.name, [attribute.name], unique: false) }
                if attribute.isUnique { add(entity.name, [attribute.name], unique: true) }
            }
            for (_, column) in Self.foreignKeys(of: entity) {
                // A one-to-one's key has a unique index, which serves lookups too unless it
                // leaves out the 0 of a key checked at commit.
                if let oneToOne = oneToOnes.first(where: { $0.entity == entity.name && $0.column == column }) {
                    if result[oneToOne.indexName] == nil { result[oneToOne.indexName] = oneToOne.indexSQL }
                    if !oneToOne.isCheckedAtCommit { continue }
                }
                add(entity.name, [column], unique: false)
            }
            for (_, foreignKey, position) in Self.positionColumns(of: entity) {
                add(entity.name, [foreignKey, position], unique: false)
            }
        }
        for join in joinTables { add(join.name, [join.inverseColumn], unique: false) }
        return result
    }

    /// The names the model chose for its indexes: the store owns them like its
    /// `strata_` indexes.
    var chosenIndexNames: Set<String> {
        Set(schema.entities.flatMap { $0.indexes.compactMap(\.name) })
    }

    // MARK: - Types and literals

    static func sqlType(_ type: ValueType) -> String {
        switch type {
        case .string, .url, .enumeration, .date, .decimal, .json: "TEXT"
        case .int, .int32, .int16, .bool: "INTEGER"
        case .double, .float: "REAL"
        case .uuid, .data: "BLOB"
        }
    }

    static func defaultSQL(_ value: DefaultValueDescriptor) -> String {
        switch value {
        case .value(let value): "(\(literal(value)))"
        case .now: "(STRFTIME('%Y-%m-%d %H:%M:%f', 'now'))"
        case .uuid: "(RANDOMBLOB(16))"
        }
    }

    /// An SQL literal, for DDL only (statements with user values use bound arguments).
    static func literal(_ value: DatabaseValue) -> String {
        switch value.storage {
        case .null: return "NULL"
        case .int64(let int): return String(int)
        case .double(let double):
            if double.isNaN { return "NULL" }
            if double.isInfinite { return double < 0 ? "-9e999" : "9e999" }
            return "\(double)"
        case .string(let string): return "'" + string.replacingOccurrences(of: "'", with: "''") + "'"
        case .blob(let data): return "X'" + data.map { String(format: "%02X", $0) }.joined() + "'"
        }
    }

    /// A value for rows that get a new required column without default (data loss allowed).
    static func zeroLiteral(_ type: ValueType) -> String {
        switch type {
        case .string, .url, .decimal: "''"
        case .json: "'null'"
        case .enumeration(_, let cases): literal((cases.first ?? "").databaseValue)
        case .date: "'1970-01-01 00:00:00.000'"
        case .int, .int32, .int16, .bool: "0"
        case .double, .float: "0.0"
        case .uuid: "ZEROBLOB(16)"
        case .data: "X''"
        }
    }
}
