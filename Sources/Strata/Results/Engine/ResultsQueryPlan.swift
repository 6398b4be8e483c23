import GRDB

/// What a request reads, worked out once: the SQL it runs, and which tables' changes can
/// affect which items.
struct ResultsQueryPlan: Sendable {
    enum SectionKind: Sendable {
        case none
        case key(path: [String], descending: Bool, firstLetter: Bool)
        case entity(relationship: [String], entity: String, sort: [SortNode], predicate: PredicateNode?, orphans: Bool)
    }

    /// A to-one hop that item values depend on: a change of a row of `table` affects the items
    /// whose `foreignKeyPath` (from the item) equals that row's id.
    struct Dependency: Sendable {
        var table: String
        var foreignKeyPath: [String]
        /// Columns of `table` the request reads (nil: any column).
        var columns: Set<String>?
    }

    /// A many-to-many relationship of the item that a to-many part of the predicate reads
    /// (`ANY tags.name == $x`, `tags.@count > 2`): a link or unlink in `joinTable` affects
    /// the item in `itemColumn`; a change of a `destination` row (of the `columns` the part
    /// reads) affects the items linked to it. Such parts are kept up to date from the join
    /// rows each commit records, without a refetch.
    struct JoinDependency: Sendable {
        var joinTable: String
        var itemColumn: String
        var destinationColumn: String
        var destination: String
        /// Columns of `destination` the part reads (empty: membership only, as `@count`).
        var columns: Set<String>
    }

    let schema: SchemaDescriptor
    let itemEntity: String
    /// The item entity's primary key column.
    var itemKey: String { schema.entity(named: itemEntity)?.primaryKey ?? "id" }
    let predicate: PredicateNode?
    let sort: [SortNode]
    let sectionKind: SectionKind
    /// Tables whose changes make the controller refetch everything (to-many predicates,
    /// relationships stored on the other side).
    private(set) var refetchTables: Set<String> = []
    /// Tables whose changes make an entity-sectioned controller re-read its section objects.
    private(set) var sectionTables: Set<String> = []
    private(set) var dependencies: [Dependency] = []
    private(set) var joinDependencies: [JoinDependency] = []
    /// True when an entity-sectioned request's section predicate and sort read only the
    /// section object's own columns.
    private(set) var sectionsDependOnOwnRowOnly = false

    init<Item: StrataEntity, Section>(request: ResultsRequest<Item, Section>, schema: SchemaDescriptor) throws {
        self.schema = schema
        itemEntity = Item.entityName
        predicate = request.predicate?.node
        sort = request.sortKeys.map(\.node)
        switch request.sectioning.kind {
        case .none:
            sectionKind = .none
        case .key(let path, let descending, let firstLetter):
            sectionKind = .key(path: path, descending: descending, firstLetter: firstLetter)
        case .entity(let relationship, let sort, let predicate, let orphans):
            let entity = try Self.destination(of: relationship, from: Item.entityName, in: schema)
            sectionKind = .entity(
                relationship: relationship, entity: entity.name, sort: sort, predicate: predicate, orphans: orphans)
        }
        try analyse()
    }

    var itemDescending: [Bool] { sort.map(\.descending) }

    /// Every table whose rows can change the results: the items', the section objects', and
    /// those the predicate, sorts and section key read.
    var readTables: Set<String> {
        refetchTables.union(sectionTables).union(dependencies.map(\.table)).union([itemEntity])
            .union(joinDependencies.flatMap { [$0.joinTable, $0.destination] })
    }

    // MARK: - Dependencies

    private mutating func analyse() throws {
        var paths: [[String]] = sort.map(\.path)
        if let predicate { try collect(predicate, from: itemEntity, into: &paths) }
        switch sectionKind {
        case .none: break
        case .key(let path, _, _): paths.append(path)
        case .entity(let relationship, let entity, let sectionSort, let sectionPredicate, _):
            paths.append(schema.keyPath(through: relationship, from: itemEntity))
            sectionTables.insert(entity)
            var sectionPaths = sectionSort.map(\.path)
            var reachable = Set<String>()
            if let sectionPredicate {
                try collect(sectionPredicate, from: entity, into: &sectionPaths, toManyTables: &reachable)
            }
            for path in sectionPaths { try tables(along: path, from: entity, into: &reachable) }
            sectionTables.formUnion(reachable)
            // Without to-many parts and relationship hops, a section object's membership and
            // order depend on its own row only: changed sections can be re-read by id.
            sectionsDependOnOwnRowOnly = reachable.isEmpty && sectionPaths.allSatisfy { $0.count == 1 }
        }
        for path in paths { try addDependencies(for: path) }
    }

    private mutating func collect(_ node: PredicateNode, from entity: String, into paths: inout [[String]]) throws {
        var toMany = Set<String>()
        var joins: [JoinDependency]? = []
        try collect(node, from: entity, into: &paths, toManyTables: &toMany, joins: &joins)
        refetchTables.formUnion(toMany)
        joinDependencies += joins ?? []
    }

    private func collect(
        _ node: PredicateNode, from entity: String, into paths: inout [[String]], toManyTables: inout Set<String>
    ) throws {
        var joins: [JoinDependency]? = nil
        try collect(node, from: entity, into: &paths, toManyTables: &toManyTables, joins: &joins)
    }

    /// Collects the value paths of `node` outside to-many parts into `paths`, and every table
    /// a to-many part reads into `toManyTables` — except, when `joins` is given (the item's
    /// own predicate), the parts over one many-to-many relationship of the item that read
    /// only the destination's own columns, which go into `joins`.
    private func collect(
        _ node: PredicateNode, from entity: String, into paths: inout [[String]], toManyTables: inout Set<String>,
        joins: inout [JoinDependency]?
    ) throws {
        func toMany(_ path: [String], sub: PredicateNode?) throws {
            if joins != nil, let join = try joinDependency(path, sub: sub, from: entity) {
                joins?.append(join)
            } else {
                try toManyReach(path, from: entity, sub: sub, into: &toManyTables)
            }
        }
        func value(_ value: ValueNode) throws {
            switch value {
            case .path(let path): paths.append(path)
            case .count(let path): try toMany(path, sub: nil)
            case .value: break
            }
        }
        switch node {
        case .constant: break
        case .and(let nodes), .or(let nodes):
            for node in nodes { try collect(node, from: entity, into: &paths, toManyTables: &toManyTables, joins: &joins) }
        case .not(let node): try collect(node, from: entity, into: &paths, toManyTables: &toManyTables, joins: &joins)
        case .compare(let lhs, _, let rhs), .match(let lhs, _, let rhs, _):
            try value(lhs)
            try value(rhs)
        case .isIn(let lhs, _), .between(let lhs, _, _): try value(lhs)
        case .quantified(_, let relationship, let sub):
            try toMany(relationship, sub: sub)
        }
    }

    /// The join dependency of a to-many part over `path` (then `sub` from its destination),
    /// when it is one many-to-many hop from `entity` (not its own inverse) and `sub` reads
    /// only the destination's own columns; nil otherwise.
    private func joinDependency(_ path: [String], sub: PredicateNode?, from entity: String) throws -> JoinDependency? {
        guard path.count == 1, let owner = schema.entity(named: entity),
              let relationship = owner.relationship(named: path[0]),
              case .joinTable(let table, let column, let inverseColumn) = relationship.storage,
              owner.symmetricJoinTable(relationship) == nil
        else { return nil }
        var columns = Set<String>()
        if let sub {
            var subPaths: [[String]] = []
            var reach = Set<String>()
            try collect(sub, from: relationship.destination, into: &subPaths, toManyTables: &reach)
            guard reach.isEmpty, subPaths.allSatisfy({ $0.count == 1 }) else { return nil }
            columns = Set(subPaths.map { $0[0] })
        }
        return JoinDependency(
            joinTable: table, itemColumn: column, destinationColumn: inverseColumn,
            destination: relationship.destination, columns: columns)
    }

    /// Every table a to-many part (`relationship` path, then `sub` from its destination) reads.
    private func toManyReach(_ path: [String], from entity: String, sub: PredicateNode?, into tables: inout Set<String>) throws {
        try self.tables(along: schema.keyPath(through: path, from: entity), from: entity, into: &tables, allowToManyLast: true)
        let destination = try Self.destination(of: path, from: entity, in: schema, allowToManyLast: true)
        tables.insert(destination.name)
        if let last = path.last, let owner = try? Self.destination(of: Array(path.dropLast()), from: entity, in: schema),
            let relationship = owner.relationship(named: last), case .joinTable(let name, _, _) = relationship.storage
        {
            tables.insert(name)
        }
        if let sub {
            var subPaths: [[String]] = []
            try collect(sub, from: destination.name, into: &subPaths, toManyTables: &tables)
            for subPath in subPaths { try self.tables(along: subPath, from: destination.name, into: &tables) }
        }
    }

    /// The tables of the to-one hops of a value path.
    private func tables(
        along path: [String], from entity: String, into tables: inout Set<String>, allowToManyLast: Bool = false
    ) throws {
        var current = try Self.entity(named: entity, in: schema)
        for (index, name) in path.dropLast().enumerated() {
            guard let relationship = current.relationship(named: name) else {
                throw QueryError.invalidPath(path, entity: entity)
            }
            if relationship.isToMany && !(allowToManyLast && index == path.count - 2) {
                throw QueryError.invalidPath(path, entity: entity)
            }
            current = try Self.entity(named: relationship.destination, in: schema)
            tables.insert(current.name)
        }
    }

    private mutating func addDependencies(for path: [String]) throws {
        var current = try Self.entity(named: itemEntity, in: schema)
        let relationships = Array(path.dropLast())
        for (index, name) in relationships.enumerated() {
            guard let relationship = current.relationship(named: name), !relationship.isToMany else {
                throw QueryError.invalidPath(path, entity: itemEntity)
            }
            let destination = try Self.entity(named: relationship.destination, in: schema)
            let readColumn = index + 1 < relationships.count ? nil : path.last
            switch relationship.storage {
            case .foreignKey(let column):
                let foreignKeyPath = Array(relationships[..<index]) + [column]
                var columns: Set<String>? = nil
                if let readColumn { columns = [readColumn] }
                if index + 1 < relationships.count,
                    let next = destination.relationship(named: relationships[index + 1]),
                    case .foreignKey(let nextColumn) = next.storage
                {
                    columns = [nextColumn]
                }
                dependencies.append(Dependency(table: destination.name, foreignKeyPath: foreignKeyPath, columns: columns))
            case .inverseForeignKey, .joinTable:
                refetchTables.insert(destination.name)
            }
            current = destination
        }
    }

    // MARK: - Tracking

    /// What one commit does to the results, decided once, before anything is changed.
    enum CommitEffect {
        /// Nothing the request reads changed.
        case unaffected
        /// The commit cannot be traced row by row (tables invalidated without detail, a
        /// relationship stored on the other side, a join row without recorded values): read
        /// everything again.
        case refetch
        /// The rows to re-read and to remove, and the section objects to re-read.
        case items(TrackedChanges)
    }

    struct TrackedChanges {
        /// Items to re-read by id (inserted, updated, or reached through a dependency).
        var affected: Set<Int64>
        /// Items the commit deleted.
        var deleted: Set<Int64>
        /// Ids of the item table's rows the commit itself wrote (for batched pages).
        var own: Set<Int64>
        /// The section objects to re-read: nil when none; an empty set when all of them.
        var sectionObjects: Set<Int64>?

        var rowCount: Int { affected.count + deleted.count }
    }

    /// Traces `changes` to the items and section objects they affect (the *tracking* step of
    /// the pipeline: track, index, diff, deliver). Reads the items reached through
    /// dependencies, in the state after the commit.
    func effect(of changes: CommittedChanges, _ db: Database, fetcher: ResultsFetcher<some StrataEntity, some Hashable & Sendable>)
        throws -> CommitEffect
    {
        if !changes.invalidatedTables.isDisjoint(with: readTables) { return .refetch }
        let changedTables = Set(changes.tables.keys.filter { !changes[$0].isEmpty })
        if !refetchTables.isDisjoint(with: changedTables) { return .refetch }
        let own = changes[itemEntity]
        var sectionObjects: Set<Int64>?
        if case .entity(_, let entity, _, _, _) = sectionKind, !sectionTables.isDisjoint(with: changedTables) {
            sectionObjects = sectionsDependOnOwnRowOnly ? changes[entity].all : []
        }
        var affected = own.inserted.union(own.updated)
        for dependency in dependencies {
            let table = changes[dependency.table]
            if table.isEmpty { continue }
            var ids = table.inserted.union(table.deleted)
            if let columns = dependency.columns {
                if !columns.isDisjoint(with: table.updatedColumns) { ids.formUnion(table.updated) }
            } else {
                ids.formUnion(table.updated)
            }
            if ids.isEmpty { continue }
            affected.formUnion(try fetcher.itemIDs(db, where: dependency.foreignKeyPath, in: ids))
        }
        for join in joinDependencies {
            let links = changes[join.joinTable]
            if !links.isEmpty {
                // A link or unlink: the join row names the item. A join row rewritten in
                // place, or one without recorded values, is not traced.
                let touched = links.inserted.union(links.deleted)
                guard links.updated.isEmpty, touched.allSatisfy({ links.joinRows[$0]?[join.itemColumn] != nil }) else {
                    return .refetch
                }
                for rowID in touched { affected.insert(links.joinRows[rowID]![join.itemColumn]!) }
            }
            let destinations = changes[join.destination]
            if destinations.isEmpty { continue }
            // Deleted or new destinations (dangling links of a `noAction` rule), and updated
            // ones when the part reads a written column: the items still linked to them.
            var ids = destinations.inserted.union(destinations.deleted)
            if !join.columns.isDisjoint(with: destinations.updatedColumns) { ids.formUnion(destinations.updated) }
            if !ids.isEmpty { affected.formUnion(try fetcher.linkedItemIDs(db, join, to: ids)) }
        }
        if affected.isEmpty && own.deleted.isEmpty && sectionObjects == nil { return .unaffected }
        return .items(TrackedChanges(affected: affected, deleted: own.deleted, own: own.all, sectionObjects: sectionObjects))
    }

    // MARK: - Schema lookups

    static func entity(named name: String, in schema: SchemaDescriptor) throws -> EntityDescriptor {
        guard let entity = schema.entity(named: name) else { throw QueryError.unknownEntity(name) }
        return entity
    }

    static func destination(
        of relationships: [String], from root: String, in schema: SchemaDescriptor, allowToManyLast: Bool = false
    ) throws -> EntityDescriptor {
        var current = try entity(named: root, in: schema)
        for (index, name) in relationships.enumerated() {
            guard let relationship = current.relationship(named: name),
                !relationship.isToMany || (allowToManyLast && index == relationships.count - 1)
            else { throw QueryError.invalidPath(relationships, entity: root) }
            current = try Self.entity(named: relationship.destination, in: schema)
        }
        return current
    }
}
