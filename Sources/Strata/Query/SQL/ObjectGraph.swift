import GRDB

/// Every row of a store's tables, in memory, navigable by relationship: a
/// ``PredicateSubject`` source for in-memory evaluation (tests, small stores). A
/// many-to-many that is its own inverse is symmetric, as in ``SQLQueryBuilder``.
public struct ObjectGraph: Sendable {
    /// The model the rows belong to.
    public let schema: SchemaDescriptor
    /// Table → rowid → column → value.
    public private(set) var rows: [String: [Int64: [String: DatabaseValue]]]
    /// Join table → its (column, inverse column) pairs.
    private var links: [String: [(Int64, Int64)]]

    /// Loads every table of `schema`. Text is read in full, past a NUL character, as SQLite
    /// compares it.
    public static func load(_ db: Database, schema: SchemaDescriptor) throws -> ObjectGraph {
        var rows: [String: [Int64: [String: DatabaseValue]]] = [:]
        for entity in schema.entities {
            var table: [Int64: [String: DatabaseValue]] = [:]
            // A cursor's row reads the statement itself, so text past a NUL can be read.
            let cursor = try Row.fetchCursor(db, sql: "SELECT * FROM \(quoted(entity.name))")
            while let row = try cursor.next() {
                var values: [String: DatabaseValue] = [:]
                for (index, column) in row.columnNames.enumerated() where values[column] == nil {
                    values[column] = DatabaseValueOrdering.sortValue(in: row, at: index)
                }
                table[row[entity.primaryKey]] = values
            }
            rows[entity.name] = table
        }
        var links: [String: [(Int64, Int64)]] = [:]
        for join in SchemaSQL(schema: schema).joinTables {
            links[join.name] = try Row.fetchAll(
                db, sql: "SELECT \(quoted(join.column)), \(quoted(join.inverseColumn)) FROM \(quoted(join.name))"
            ).map { ($0[0], $0[1]) }
        }
        return ObjectGraph(schema: schema, rows: rows, links: links)
    }

    /// The object of `entity` with `id`, if it exists.
    public func subject(_ entity: String, id: Int64) -> (any PredicateSubject)? {
        guard rows[entity]?[id] != nil, let descriptor = schema.entity(named: entity) else { return nil }
        return Subject(graph: self, entity: descriptor, id: id)
    }

    private struct Subject: PredicateSubject {
        let graph: ObjectGraph
        let entity: EntityDescriptor
        let id: Int64

        func value(ofColumn name: String) throws -> DatabaseValue {
            guard let value = graph.rows[entity.name]?[id]?[name] else {
                throw QueryError.invalidPath([name], entity: entity.name)
            }
            return value
        }

        func destination(ofToOne name: String) throws -> (any PredicateSubject)? {
            guard let relationship = entity.relationship(named: name), !relationship.isToMany else {
                throw QueryError.invalidPath([name], entity: entity.name)
            }
            switch relationship.storage {
            case .foreignKey(let column):
                guard let target = Int64.fromDatabaseValue(try value(ofColumn: column)) else { return nil }
                return graph.subject(relationship.destination, id: target)
            case .inverseForeignKey:
                let column = try graph.inverseColumn(relationship, of: entity)
                let ids = (graph.rows[relationship.destination] ?? [:])
                    .filter { $0.value[column].flatMap(Int64.fromDatabaseValue) == id }.keys
                return ids.min().flatMap { graph.subject(relationship.destination, id: $0) }
            case .joinTable:
                throw QueryError.invalidPath([name], entity: entity.name)
            }
        }

        func destinations(ofToMany name: String) throws -> [any PredicateSubject] {
            guard let relationship = entity.relationship(named: name), relationship.isToMany else {
                throw QueryError.invalidPath([name], entity: entity.name)
            }
            let ids: [Int64]
            switch relationship.storage {
            case .inverseForeignKey:
                let column = try graph.inverseColumn(relationship, of: entity)
                ids = (graph.rows[relationship.destination] ?? [:])
                    .filter { $0.value[column].flatMap(Int64.fromDatabaseValue) == id }.keys.sorted()
            case .joinTable(let table, _, _) where entity.symmetricJoinTable(relationship) != nil:
                // Symmetric: the other side of every row naming this object in either
                // column, each once, as SQLQueryBuilder's `IN` counts them.
                let others = (graph.links[table] ?? []).flatMap { pair -> [Int64] in
                    (pair.0 == id ? [pair.1] : []) + (pair.1 == id ? [pair.0] : [])
                }
                ids = Set(others).sorted()
            case .joinTable(let table, let column, let inverseColumn):
                guard let join = SchemaSQL(schema: graph.schema).joinTables.first(where: { $0.name == table }) else { return [] }
                let forward = join.column == column && join.inverseColumn == inverseColumn
                ids = (graph.links[table] ?? []).compactMap { pair in
                    forward ? (pair.0 == id ? pair.1 : nil) : (pair.1 == id ? pair.0 : nil)
                }
            case .foreignKey:
                throw QueryError.invalidPath([name], entity: entity.name)
            }
            return ids.compactMap { graph.subject(relationship.destination, id: $0) }
        }
    }

    fileprivate func inverseColumn(_ relationship: RelationshipDescriptor, of entity: EntityDescriptor) throws -> String {
        guard let inverse = schema.entity(named: relationship.destination)?.relationship(named: relationship.inverse),
              case .foreignKey(let column) = inverse.storage
        else { throw QueryError.invalidRelationship(entity: entity.name, relationship: relationship.name) }
        return column
    }
}
