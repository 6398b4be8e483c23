import GRDB

/// An object a predicate can be evaluated on in memory: its column values, and the objects
/// its relationships lead to.
public protocol PredicateSubject {
    /// The value of a column (an attribute, `id`, or a to-one's foreign key column).
    func value(ofColumn name: String) throws -> DatabaseValue
    /// The destination of a to-one relationship; nil when it is nil or dangling.
    func destination(ofToOne relationship: String) throws -> (any PredicateSubject)?
    /// The existing destinations of a to-many relationship.
    func destinations(ofToMany relationship: String) throws -> [any PredicateSubject]
}

/// Evaluates ``PredicateNode`` trees in memory with exactly the semantics of their SQL
/// (``SQLQueryBuilder``): values compare as SQLite compares them
/// (``DatabaseValueOrdering``), `==`/`!=` treat NULL like a value, ordering comparisons and
/// string operators are false on NULL, string operators use ``StringMatching``.
///
/// ```swift
/// let graph = try ObjectGraph.load(db, schema: NotesModel.schema)
/// let matches = try PredicateEvaluator.evaluate(predicate.node, on: graph.subject("Note", id: 1)!)
/// ```
public enum PredicateEvaluator {
    public static func evaluate(_ node: PredicateNode, on subject: any PredicateSubject) throws -> Bool {
        switch node {
        case .constant(let value):
            return value
        case .and(let nodes):
            for node in nodes where try !evaluate(node, on: subject) { return false }
            return true
        case .or(let nodes):
            for node in nodes where try evaluate(node, on: subject) { return true }
            return false
        case .not(let node):
            return try !evaluate(node, on: subject)
        case .compare(let lhs, let op, let rhs):
            let l = try value(lhs, on: subject), r = try value(rhs, on: subject)
            switch op {
            case .equal: return DatabaseValueOrdering.isSame(l, r)
            case .notEqual: return !DatabaseValueOrdering.isSame(l, r)
            default:
                if l.isNull || r.isNull { return false }
                let order = DatabaseValueOrdering.compare(l, r)
                switch op {
                case .less: return order < 0
                case .lessOrEqual: return order <= 0
                case .greater: return order > 0
                default: return order >= 0
                }
            }
        case .match(let lhs, let op, let rhs, let options):
            return StringMatching.matches(try value(lhs, on: subject), op, try value(rhs, on: subject), options)
        case .isIn(let lhs, let values):
            let l = try value(lhs, on: subject)
            return values.contains { DatabaseValueOrdering.isSame(l, $0) }
        case .between(let lhs, let low, let high):
            let l = try value(lhs, on: subject)
            if l.isNull || low.isNull || high.isNull { return false }
            return DatabaseValueOrdering.compare(l, low) >= 0 && DatabaseValueOrdering.compare(l, high) <= 0
        case .quantified(let quantifier, let relationship, let predicate):
            let objects = try destinations(relationship, on: subject)
            switch quantifier {
            case .any: return try objects.contains { try evaluate(predicate, on: $0) }
            case .none: return try !objects.contains { try evaluate(predicate, on: $0) }
            case .all: return try objects.allSatisfy { try evaluate(predicate, on: $0) }
            }
        }
    }

    /// The value of a value node: NULL when a to-one on the path is nil.
    public static func value(_ node: ValueNode, on subject: any PredicateSubject) throws -> DatabaseValue {
        switch node {
        case .value(let value):
            return value
        case .count(let relationship):
            return Int64(try destinations(relationship, on: subject).count).databaseValue
        case .path(let path):
            guard let last = path.last else { return .null }
            var current: any PredicateSubject = subject
            for name in path.dropLast() {
                guard let next = try current.destination(ofToOne: name) else { return .null }
                current = next
            }
            return try current.value(ofColumn: last)
        }
    }

    private static func destinations(_ path: [String], on subject: any PredicateSubject) throws -> [any PredicateSubject] {
        guard let last = path.last else { return [] }
        var current: any PredicateSubject = subject
        for name in path.dropLast() {
            guard let next = try current.destination(ofToOne: name) else { return [] }
            current = next
        }
        return try current.destinations(ofToMany: last)
    }

    /// The values a list of sort keys orders by, for ``DatabaseValueOrdering/compare(_:id:_:id:descending:)``:
    /// the value, or for enum attributes the case's position (unknown values after the
    /// known ones), as ``SQLQueryBuilder/orderingExpression(_:)`` selects them.
    public static func sortValues(
        _ sort: [SortNode], on subject: any PredicateSubject, schema: SchemaDescriptor, entity: String
    ) throws -> [DatabaseValue] {
        let builder = try SQLQueryBuilder(schema: schema, rootEntity: entity)
        return try sort.map { key in
            let value = try value(.path(key.path), on: subject)
            guard case .enumeration(_, let cases) = try builder.valueType(of: key.path), !value.isNull else { return value }
            for (index, name) in cases.enumerated() where DatabaseValueOrdering.isSame(value, name.databaseValue) {
                return Int64(index).databaseValue
            }
            return Int64(cases.count).databaseValue
        }
    }
}

/// Every row of a store's tables, in memory, navigable by relationship: a
/// ``PredicateSubject`` source for in-memory evaluation (tests, small stores).
public struct ObjectGraph: Sendable {
    public let schema: SchemaDescriptor
    /// Table → rowid → column → value.
    public private(set) var rows: [String: [Int64: [String: DatabaseValue]]]
    /// Join table → its (column, inverse column) pairs.
    private var links: [String: [(Int64, Int64)]]

    /// Loads every table of `schema`.
    public static func load(_ db: Database, schema: SchemaDescriptor) throws -> ObjectGraph {
        var rows: [String: [Int64: [String: DatabaseValue]]] = [:]
        for entity in schema.entities {
            var table: [Int64: [String: DatabaseValue]] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT * FROM \(quoted(entity.name))") {
                table[row["id"]] = Dictionary(row.map { ($0.0, $0.1) }, uniquingKeysWith: { a, _ in a })
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
