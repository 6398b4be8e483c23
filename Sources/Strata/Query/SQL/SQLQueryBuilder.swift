import GRDB

/// Renders ``PredicateNode`` and ``SortNode`` trees of one root entity to SQL, with bound
/// arguments only (values are never spliced into SQL text).
///
/// - A value path through to-one relationships (`notebook.name`) adds one `LEFT JOIN` per
///   relationship prefix; paths that share a prefix share its alias.
/// - `ANY`/`ALL`/`NONE` over a to-many relationship render as correlated `EXISTS`
///   subqueries (through the foreign key or the join table), `@count` as a correlated
///   `COUNT(*)` subquery. Dangling references (``DeleteRule/noAction``) are not counted.
///   A many-to-many that is its own inverse (`Person.friends` ↔ `Person.friends`) is
///   symmetric: its join rows are followed from either column, and each destination
///   counts once.
/// - Every condition is two-valued (0 or 1, never NULL), so `NOT` means what it says:
///   `==`/`!=` render as `IS`/`IS NOT`; ordering comparisons, `BETWEEN` and string
///   operators are false when a side is NULL (but `==[c]` is true for two NULLs, as `IS`);
///   `IN` is true when the value `IS` one element.
/// - String operators, `==[c]`/`==[d]`/`==[cd]` included, call the SQL function
///   `strata_match` (``StringMatching``), which a ``Store`` registers on each connection.
/// - Values are bound as GRDB binds them: a NaN is NULL, text ends at its first NUL.
/// - Sort keys on enum attributes order by declaration order (a `CASE` over the cases;
///   unknown raw values after the known ones, NULL first as always); every order ends
///   with the root's `id`.
///
/// ```swift
/// var builder = try SQLQueryBuilder(schema: NotesModel.schema, rootEntity: "Note")
/// let condition = try builder.condition(Note.notebook.name == "Work")
/// let order = try builder.orderingTerms([Note.title.ascending.node])
/// let sql: SQL = "SELECT \(builder.rootAlias).* FROM \(builder.fromClause) WHERE \(condition) ORDER BY \(order)"
/// let rows = try Row.fetchAll(db, SQLRequest(literal: sql))
/// ```
///
/// Render the conditions and orderings first, then ``fromClause``: it holds the joins the
/// others asked for.
public struct SQLQueryBuilder: Sendable {
    /// The model that paths are resolved in.
    public let schema: SchemaDescriptor
    /// The entity that paths start from.
    public let rootEntity: EntityDescriptor
    /// The alias of the root table (`t0` at top level).
    public let rootAlias: String

    private var joins: [Join] = []
    private var aliasCounter: AliasCounter

    private struct Join: Sendable {
        var pathKey: String
        var alias: String
        var entity: EntityDescriptor
        var sql: SQL
    }

    /// Shared between a builder and the builders of its subqueries, so aliases never clash.
    private final class AliasCounter: Sendable {
        private let next = LockedValue(0)
        let prefix: String
        init(prefix: String) { self.prefix = prefix }
        func make() -> String {
            let number = next.withLock { value -> Int in
                value += 1
                return value
            }
            return "\(prefix)\(number)"
        }
    }

    /// A builder for queries on the entity `name`; table aliases start with `aliasPrefix`. Throws
    /// ``QueryError/unknownEntity(_:)``.
    public init(schema: SchemaDescriptor, rootEntity name: String, aliasPrefix: String = "t") throws {
        guard let entity = schema.entity(named: name) else { throw QueryError.unknownEntity(name) }
        self.schema = schema
        self.rootEntity = entity
        self.rootAlias = "\(aliasPrefix)0"
        self.aliasCounter = AliasCounter(prefix: aliasPrefix)
    }

    private init(schema: SchemaDescriptor, entity: EntityDescriptor, alias: String, counter: AliasCounter) {
        self.schema = schema
        self.rootEntity = entity
        self.rootAlias = alias
        self.aliasCounter = counter
    }

    /// `"Root" AS t0 LEFT JOIN …`: the root table and the joins that rendered paths need.
    public var fromClause: SQL {
        var sql = SQL(sql: "\(quoted(rootEntity.name)) AS \(rootAlias)")
        for join in joins { sql += " " + join.sql }
        return sql
    }

    /// ``fromClause`` for a statement that reads every row of the root table (no `WHERE`):
    /// with joins, the root is scanned in table order (`NOT INDEXED`). SQLite's planner
    /// otherwise walks the root through the index of a joined foreign key, which reads the
    /// table in random order; a full scan and one sort take about half the time.
    var fullScanFromClause: SQL {
        guard !joins.isEmpty else { return fromClause }
        var sql = SQL(sql: "\(quoted(rootEntity.name)) AS \(rootAlias) NOT INDEXED")
        for join in joins { sql += " " + join.sql }
        return sql
    }

    /// `SELECT <selection> FROM … [WHERE …] ORDER BY …, t0.<primary key>`.
    public mutating func select(
        _ selection: SQL, where predicate: PredicateNode?, orderBy sort: [SortNode], limit: Int? = nil
    ) throws -> SQL {
        let condition = try predicate.map { try self.condition($0) }
        let order = try orderingTerms(sort)
        var sql: SQL = "SELECT \(selection) FROM \(fromClause)"
        if let condition { sql += " WHERE \(condition)" }
        sql += " ORDER BY \(order)"
        if let limit { sql += " LIMIT \(limit)" }
        return sql
    }

    // MARK: - Values

    /// The SQL expression of a value path (an attribute, the primary key, or a foreign key column,
    /// possibly through to-one relationships); NULL when a relationship on the way is nil.
    public mutating func value(_ path: [String]) throws -> SQL {
        guard let last = path.last else { throw QueryError.invalidPath(path, entity: rootEntity.name) }
        let (alias, entity) = try joinedAlias(for: Array(path.dropLast()), fullPath: path)
        guard Self.isColumn(last, of: entity) else {
            throw QueryError.invalidPath(path, entity: rootEntity.name)
        }
        return SQL(sql: "\(alias).\(quoted(last))")
    }

    /// The expression a sort key orders by: the value, or for enum attributes the case's
    /// position in declaration order.
    public mutating func orderingExpression(_ sort: SortNode) throws -> SQL {
        let value = try self.value(sort.path)
        guard case .enumeration(_, let cases) = try valueType(of: sort.path) else { return value }
        var sql: SQL = "CASE WHEN \(value) IS NULL THEN NULL"
        for (index, name) in cases.enumerated() {
            sql += " WHEN \(value) = \(name) THEN \(index)"
        }
        sql += " ELSE \(cases.count) END"
        return sql
    }

    /// `k0 ASC, k1 DESC, …, t0."id"`: an `ORDER BY` list that ends with the root's primary key.
    public mutating func orderingTerms(_ sort: [SortNode]) throws -> SQL {
        var terms: [SQL] = []
        for key in sort {
            terms.append(try orderingExpression(key) + (key.descending ? " DESC" : " ASC"))
        }
        terms.append(SQL(sql: "\(rootAlias).\(quoted(rootEntity.primaryKey))"))
        return terms.joined(separator: ", ")
    }

    /// The type of the attribute at the end of a value path (`id` and foreign keys are `.int`).
    public func valueType(of path: [String]) throws -> ValueType {
        guard let last = path.last else { throw QueryError.invalidPath(path, entity: rootEntity.name) }
        var entity = rootEntity
        for name in path.dropLast() {
            guard let relationship = entity.relationship(named: name), !relationship.isToMany,
                  let destination = schema.entity(named: relationship.destination)
            else { throw QueryError.invalidPath(path, entity: rootEntity.name) }
            entity = destination
        }
        if let attribute = entity.attribute(named: last) { return attribute.type }
        if Self.isColumn(last, of: entity) { return .int }
        throw QueryError.invalidPath(path, entity: rootEntity.name)
    }

    static func isColumn(_ name: String, of entity: EntityDescriptor) -> Bool {
        if name == entity.primaryKey || entity.attribute(named: name) != nil { return true }
        return entity.relationships.contains {
            if case .foreignKey(let column) = $0.storage { return column == name || $0.positionColumn == name }
            return false
        }
    }

    /// The alias of the table reached through to-one `relationships` from the root.
    private mutating func joinedAlias(for relationships: [String], fullPath: [String]) throws -> (String, EntityDescriptor) {
        var alias = rootAlias
        var entity = rootEntity
        for index in relationships.indices {
            let name = relationships[index]
            guard let relationship = entity.relationship(named: name), !relationship.isToMany,
                  let destination = schema.entity(named: relationship.destination)
            else { throw QueryError.invalidPath(fullPath, entity: rootEntity.name) }
            let key = relationships[...index].joined(separator: ".")
            if let join = joins.first(where: { $0.pathKey == key }) {
                alias = join.alias
                entity = join.entity
                continue
            }
            let newAlias = aliasCounter.make()
            let table = quoted(destination.name)
            let on: String
            switch relationship.storage {
            case .foreignKey(let column):
                on = "\(newAlias).\(quoted(destination.primaryKey)) = \(alias).\(quoted(column))"
            case .inverseForeignKey:
                let column = try inverseForeignKeyColumn(of: relationship, in: entity)
                let dk = quoted(destination.primaryKey)
                on = "\(newAlias).\(dk) = (SELECT \(dk) FROM \(table) WHERE \(quoted(column)) = \(alias).\(quoted(entity.primaryKey)) ORDER BY \(dk) LIMIT 1)"
            case .joinTable:
                throw QueryError.invalidPath(fullPath, entity: rootEntity.name)
            }
            joins.append(Join(
                pathKey: key, alias: newAlias, entity: destination,
                sql: SQL(sql: "LEFT JOIN \(table) AS \(newAlias) ON \(on)")))
            alias = newAlias
            entity = destination
        }
        return (alias, entity)
    }

    /// The foreign key column, in the destination's table, of a relationship stored there.
    private func inverseForeignKeyColumn(of relationship: RelationshipDescriptor, in entity: EntityDescriptor) throws -> String {
        guard let destination = schema.entity(named: relationship.destination),
              let inverse = destination.relationship(named: relationship.inverse),
              case .foreignKey(let column) = inverse.storage
        else { throw QueryError.invalidRelationship(entity: entity.name, relationship: relationship.name) }
        return column
    }

    // MARK: - Conditions

    /// The SQL of a predicate: an expression that is always 0 or 1.
    public mutating func condition(_ node: PredicateNode) throws -> SQL {
        switch node {
        case .constant(let value):
            return value ? "1" : "0"
        case .and(let nodes):
            if nodes.isEmpty { return "1" }
            return "(" + (try nodes.map { try condition($0) }.joined(separator: " AND ")) + ")"
        case .or(let nodes):
            if nodes.isEmpty { return "0" }
            return "(" + (try nodes.map { try condition($0) }.joined(separator: " OR ")) + ")"
        case .not(let node):
            return "(NOT \(try condition(node)))"
        case .compare(let lhs, let op, let rhs):
            let l = try expression(lhs), r = try expression(rhs)
            switch op {
            case .equal: return "(\(l) IS \(r))"
            case .notEqual: return "(\(l) IS NOT \(r))"
            case .less: return "COALESCE(\(l) < \(r), 0)"
            case .lessOrEqual: return "COALESCE(\(l) <= \(r), 0)"
            case .greater: return "COALESCE(\(l) > \(r), 0)"
            case .greaterOrEqual: return "COALESCE(\(l) >= \(r), 0)"
            }
        case .match(let lhs, let op, let rhs, let options):
            let l = try expression(lhs), r = try expression(rhs)
            return "\(SQL(sql: StringMatching.sqlFunctionName))(\(op.rawValue), \(l), \(r), \(options.rawValue))"
        case .isIn(let lhs, let values):
            let l = try expression(lhs)
            let values = values.map(\.asBound)
            let nonNull = values.filter { !$0.isNull }
            var parts: [SQL] = []
            if !nonNull.isEmpty {
                let list = nonNull.map { SQL(sql: "?", arguments: [$0]) }.joined(separator: ", ")
                parts.append("COALESCE(\(l) IN (\(list)), 0)")
            }
            if nonNull.count != values.count { parts.append("(\(l) IS NULL)") }
            if parts.isEmpty { return "0" }
            return "(" + parts.joined(separator: " OR ") + ")"
        case .between(let lhs, let low, let high):
            let l = try expression(lhs)
            return "COALESCE(\(l) BETWEEN \(low.asBound) AND \(high.asBound), 0)"
        case .quantified(let quantifier, let relationship, let predicate):
            var (subquery, inner) = try toManySubquery(relationship)
            switch quantifier {
            case .any:
                let c = try inner.condition(predicate)
                return "EXISTS (SELECT 1 FROM \(inner.fromClause) WHERE \(subquery) AND \(c))"
            case .none:
                let c = try inner.condition(predicate)
                return "(NOT EXISTS (SELECT 1 FROM \(inner.fromClause) WHERE \(subquery) AND \(c)))"
            case .all:
                let c = try inner.condition(predicate)
                return "(NOT EXISTS (SELECT 1 FROM \(inner.fromClause) WHERE \(subquery) AND NOT \(c)))"
            }
        }
    }

    private mutating func expression(_ node: ValueNode) throws -> SQL {
        switch node {
        case .path(let path):
            return try value(path)
        case .value(let value):
            return SQL(sql: "?", arguments: [value.asBound])
        case .count(let relationship):
            let (link, inner) = try toManySubquery(relationship)
            return "(SELECT COUNT(*) FROM \(inner.fromClause) WHERE \(link))"
        }
    }

    /// A builder rooted at the destination of a to-many relationship path, and the
    /// condition that links its rows to this builder's row.
    private mutating func toManySubquery(_ path: [String]) throws -> (SQL, SQLQueryBuilder) {
        guard let last = path.last else { throw QueryError.invalidPath(path, entity: rootEntity.name) }
        let (alias, entity) = try joinedAlias(for: Array(path.dropLast()), fullPath: path)
        guard let relationship = entity.relationship(named: last), relationship.isToMany,
              let destination = schema.entity(named: relationship.destination)
        else { throw QueryError.invalidPath(path, entity: rootEntity.name) }
        let innerAlias = aliasCounter.make()
        let inner = SQLQueryBuilder(schema: schema, entity: destination, alias: innerAlias, counter: aliasCounter)
        let key = quoted(entity.primaryKey), innerKey = quoted(destination.primaryKey)
        let link: SQL
        switch relationship.storage {
        case .inverseForeignKey:
            let column = try inverseForeignKeyColumn(of: relationship, in: entity)
            link = SQL(sql: "\(innerAlias).\(quoted(column)) = \(alias).\(key)")
        case .joinTable(let table, let column, let inverseColumn) where entity.symmetricJoinTable(relationship) != nil:
            // A link is one row in either order: follow both columns. `IN` counts a person
            // once however many rows name it (a link to oneself, both orders stored by raw SQL).
            link = SQL(sql: """
                \(innerAlias).\(innerKey) IN (SELECT \(quoted(inverseColumn)) FROM \(quoted(table)) \
                WHERE \(quoted(column)) = \(alias).\(key) UNION ALL SELECT \(quoted(column)) FROM \(quoted(table)) \
                WHERE \(quoted(inverseColumn)) = \(alias).\(key))
                """)
        case .joinTable(let table, let column, let inverseColumn):
            link = SQL(sql: """
                \(innerAlias).\(innerKey) IN (SELECT \(quoted(inverseColumn)) FROM \(quoted(table)) \
                WHERE \(quoted(column)) = \(alias).\(key))
                """)
        case .foreignKey:
            throw QueryError.invalidPath(path, entity: rootEntity.name)
        }
        return (link, inner)
    }
}
