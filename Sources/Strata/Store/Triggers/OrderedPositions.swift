import GRDB

/// The stored order of ordered to-many relationships (`ordered: true`).
///
/// Each child's place among its siblings is an integer in its own table, in the position
/// column of its to-one (`Task.listPosition` for `TaskList.tasks`): siblings are ordered by
/// (position, id). Positions are *gapped*: consecutive children are ``gap`` apart when
/// appended or rebalanced, so a child placed between two others takes the integer halfway
/// between them, and a move writes one row. When two neighbours have no integer left
/// between them, a **local rebalance** spreads the smallest window of siblings around the
/// place (doubling from 8 on each side) that has room over the positions its outer
/// neighbours leave, and writes only that window; the whole list is renumbered only when
/// its siblings hold a NULL position (a row written by raw SQL).
///
/// Every write path gets a place: triggers give a child that is inserted with a parent and
/// no position, or whose parent changes while its position does not, the last place in
/// its new parent (`MAX + gap`); a child whose parent becomes nil loses its position.
enum OrderedPositions {
    /// The distance between consecutive positions after an append or a rebalance.
    static let gap: Int64 = 1 << 16
    /// The smallest distance a rebalance leaves between consecutive positions.
    static let minimumSpacing: Int64 = 64

    /// The ordering of one relationship: the children's table, foreign key and position.
    struct Storage: Sendable {
        var table: String
        var foreignKey: String
        var position: String
        /// The children's primary key column.
        var key: String
    }

    /// The storage of the ordered to-many `relationship` of `entity` in `schema`; nil when it
    /// is not an ordered to-many whose inverse stores a foreign key.
    static func storage(of relationship: RelationshipDescriptor, in schema: SchemaDescriptor) -> Storage? {
        guard relationship.isToMany, relationship.isOrdered, case .inverseForeignKey = relationship.storage,
              let destination = schema.entity(named: relationship.destination),
              let inverse = destination.relationship(named: relationship.inverse),
              case .foreignKey(let column) = inverse.storage, let position = inverse.positionColumn
        else { return nil }
        return Storage(table: destination.name, foreignKey: column, position: position, key: destination.primaryKey)
    }

    // MARK: - Triggers

    /// Trigger name → `CREATE TRIGGER` statement, for every to-one whose inverse is ordered.
    static func triggers(of schema: SchemaDescriptor) -> [String: String] {
        var result: [String: String] = [:]
        for entity in schema.entities {
            for (relationship, foreignKey, position) in SchemaSQL.positionColumns(of: entity) {
                let table = quoted(entity.name), fk = quoted(foreignKey), pos = quoted(position)
                let k = quoted(entity.primaryKey)
                let last = "COALESCE((SELECT MAX(\(pos)) FROM \(table) WHERE \(fk) = NEW.\(fk) AND \(k) IS NOT NEW.\(k)), 0) + \(gap)"
                let insert = "strata_position_\(entity.name)_\(relationship.name)_insert"
                result[insert] = """
                    CREATE TRIGGER \(quoted(insert)) AFTER INSERT ON \(table) \
                    WHEN NEW.\(fk) IS NOT NULL AND NEW.\(pos) IS NULL BEGIN \
                    UPDATE \(table) SET \(pos) = \(last) WHERE \(k) = NEW.\(k); END
                    """
                let update = "strata_position_\(entity.name)_\(relationship.name)_update"
                result[update] = """
                    CREATE TRIGGER \(quoted(update)) AFTER UPDATE OF \(fk) ON \(table) \
                    WHEN NEW.\(fk) IS NOT OLD.\(fk) AND NEW.\(pos) IS OLD.\(pos) BEGIN \
                    UPDATE \(table) SET \(pos) = CASE WHEN NEW.\(fk) IS NULL THEN NULL ELSE \(last) END \
                    WHERE \(k) = NEW.\(k); END
                    """
            }
        }
        return result
    }

    // MARK: - Initial order (migrations)

    /// Gives every child of the ordered relationships that `old` did not order a position:
    /// per parent, in the relationship's ``RelationshipDescriptor/initialOrder`` (then id),
    /// ``gap`` apart. Children without a parent keep NULL.
    static func assignInitialPositions(_ db: Database, schema: SchemaDescriptor, old: SchemaDescriptor) throws {
        for entity in schema.entities {
            for relationship in entity.relationships {
                guard let storage = storage(of: relationship, in: schema) else { continue }
                let oldEntity = old.entity(named: entity.name) ?? entity.renamedFrom.flatMap { old.entity(named: $0) }
                let oldRelationship = oldEntity.flatMap { oldEntity in
                    oldEntity.relationship(named: relationship.name)
                        ?? relationship.renamedFrom.flatMap { oldEntity.relationship(named: $0) }
                }
                if oldRelationship?.isOrdered == true { continue }
                var builder = try SQLQueryBuilder(schema: schema, rootEntity: storage.table)
                let parent = try builder.value([storage.foreignKey])
                let order = try builder.orderingTerms(relationship.initialOrder)
                let sql: SQL = """
                    SELECT \(SQL(sql: builder.rootAlias)).\(SQL(sql: quoted(storage.key))), \(parent) FROM \(builder.fromClause) \
                    WHERE \(parent) IS NOT NULL ORDER BY \(parent), \(order)
                    """
                let (statement, arguments) = try sql.build(db)
                let update = try db.makeStatement(
                    sql: "UPDATE \(quoted(storage.table)) SET \(quoted(storage.position)) = ? WHERE \(quoted(storage.key)) = ?")
                var currentParent: Int64? = nil
                var next: Int64 = 0
                let rows = try Row.fetchCursor(db, sql: statement, arguments: arguments)
                var updates: [(Int64, Int64)] = []
                while let row = try rows.next() {
                    let id: Int64 = row[0], parentID: Int64 = row[1]
                    if parentID != currentParent {
                        currentParent = parentID
                        next = 0
                    }
                    next += gap
                    updates.append((next, id))
                }
                for (position, id) in updates { try update.execute(arguments: [position, id]) }
            }
        }
    }
}

// MARK: - Placing a child

extension OrderedPositions {
    /// Where a child goes among its new siblings (its parent's other children).
    enum Placement: Sendable {
        /// At this index among the siblings (0 first, the sibling count last).
        case index(Int)
        /// Right after this sibling.
        case after(Int64)
        /// Right before this sibling.
        case before(Int64)
        /// Last.
        case end
    }

    /// A sibling's id and position.
    private struct Sibling {
        var id: Int64
        var position: Int64?
    }

    /// Gives `child` the parent `parent` and a position at `placement` among its siblings,
    /// in the current transaction. Returns the rows written and whether a rebalance ran.
    static func place(
        _ child: Int64, parent: Int64, at placement: Placement, _ storage: Storage, _ db: Database
    ) throws -> OrderWrite {
        let t = quoted(storage.table), fk = quoted(storage.foreignKey), pos = quoted(storage.position)
        let k = quoted(storage.key)
        guard let current = try Row.fetchOne(db.cachedStatement(sql: "SELECT \(fk), \(pos) FROM \(t) WHERE \(k) = ?"), arguments: [child])
        else { throw OrderError.notFound(entity: storage.table, id: child) }
        let oldParent: Int64? = current[0], oldPosition: Int64? = current[1]
        var rebalanced = 0
        // A sibling without a position (raw SQL) has no place: number the whole list first.
        if try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT 1 FROM \(t) WHERE \(fk) = ? AND \(pos) IS NULL AND \(k) IS NOT ? LIMIT 1"),
            arguments: [parent, child]) == true
        {
            rebalanced += try renumber(parent: parent, except: child, storage, db)
        }
        var (before, after) = try neighbours(of: child, parent: parent, placement, storage, db)
        // A re-parenting must not keep the old position: the parent trigger would take the
        // write for a raw re-parenting and move the child last.
        let avoid = oldParent != parent ? oldPosition : nil
        var position = Self.between(before?.position, after?.position, avoiding: avoid)
        if position == nil {
            rebalanced += try rebalance(around: before, after, parent: parent, except: child, storage, db)
            (before, after) = try neighbours(of: child, parent: parent, placement, storage, db)
            position = Self.between(before?.position, after?.position, avoiding: avoid)
        }
        guard let position else { throw OrderError.noRoom(entity: storage.table, parent: parent) }
        if oldParent == parent && oldPosition == position { return OrderWrite(rowsWritten: rebalanced, rebalancedRows: rebalanced) }
        try db.cachedStatement(sql: "UPDATE \(t) SET \(fk) = ?, \(pos) = ? WHERE \(k) = ?")
            .execute(arguments: [parent, position, child])
        return OrderWrite(rowsWritten: rebalanced + 1, rebalancedRows: rebalanced)
    }

    /// ``between(_:_:)``, but never `avoided`: the next integer inside the range instead, or
    /// nil when there is none.
    static func between(_ low: Int64?, _ high: Int64?, avoiding avoided: Int64?) -> Int64? {
        guard let position = between(low, high) else { return nil }
        guard let avoided, position == avoided else { return position }
        if high.map({ position + 1 < $0 }) ?? true { return position + 1 }
        if low.map({ position - 1 > $0 }) ?? true { return position - 1 }
        return nil
    }

    /// The integer halfway between `low` and `high` (exclusive), a ``gap`` past an open end;
    /// nil when there is none.
    static func between(_ low: Int64?, _ high: Int64?) -> Int64? {
        switch (low, high) {
        case (nil, nil): return gap
        case (let low?, nil): return low.addingReportingOverflow(gap).overflow ? nil : low + gap
        case (nil, let high?): return high.subtractingReportingOverflow(gap).overflow ? nil : high - gap
        case (let low?, let high?):
            guard high > low, high - low >= 2 else { return nil }
            return low + (high - low) / 2
        }
    }

    /// The siblings right before and after the place `placement` names (the child itself left out).
    private static func neighbours(
        of child: Int64, parent: Int64, _ placement: Placement, _ storage: Storage, _ db: Database
    ) throws -> (Sibling?, Sibling?) {
        let t = quoted(storage.table), fk = quoted(storage.foreignKey), pos = quoted(storage.position)
        let k = quoted(storage.key)
        let siblings = "FROM \(t) WHERE \(fk) = ? AND \(k) IS NOT ?"
        func fetch(_ sql: String, _ arguments: StatementArguments) throws -> [Sibling] {
            try Row.fetchAll(db.cachedStatement(sql: "SELECT \(k), \(pos) \(siblings) \(sql)"), arguments: [parent, child] + arguments)
                .map { Sibling(id: $0[0], position: $0[1]) }
        }
        func sibling(_ id: Int64) throws -> Sibling {
            guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT \(k), \(pos) \(siblings) AND \(k) = ?"), arguments: [parent, child, id])
            else { throw OrderError.notASibling(entity: storage.table, id: id, parent: parent) }
            return Sibling(id: row[0], position: row[1])
        }
        func successor(of s: Sibling) throws -> Sibling? {
            try fetch("AND (\(pos), \(k)) > (?, ?) ORDER BY \(pos), \(k) LIMIT 1", [s.position, s.id]).first
        }
        func predecessor(of s: Sibling) throws -> Sibling? {
            try fetch("AND (\(pos), \(k)) < (?, ?) ORDER BY \(pos) DESC, \(k) DESC LIMIT 1", [s.position, s.id]).first
        }
        switch placement {
        case .end:
            return (try fetch("ORDER BY \(pos) DESC, \(k) DESC LIMIT 1", []).first, nil)
        case .index(let index):
            guard index >= 0 else { throw OrderError.indexOutOfRange(index: index, count: 0) }
            if index == 0 { return (nil, try fetch("ORDER BY \(pos), \(k) LIMIT 1", []).first) }
            let pair = try fetch("ORDER BY \(pos), \(k) LIMIT 2 OFFSET ?", [index - 1])
            guard let first = pair.first else {
                let count = try Int.fetchOne(db, sql: "SELECT COUNT(*) \(siblings)", arguments: [parent, child]) ?? 0
                throw OrderError.indexOutOfRange(index: index, count: count)
            }
            return (first, pair.count > 1 ? pair[1] : nil)
        case .after(let id):
            let s = try sibling(id)
            return (s, try successor(of: s))
        case .before(let id):
            let s = try sibling(id)
            return (try predecessor(of: s), s)
        }
    }

    /// Spreads the smallest window of siblings around the gap between `before` and `after`
    /// that has room, evenly over the positions its outer neighbours leave. Returns the
    /// number of rows written.
    private static func rebalance(
        around before: Sibling?, _ after: Sibling?, parent: Int64, except child: Int64, _ storage: Storage, _ db: Database
    ) throws -> Int {
        let t = quoted(storage.table), fk = quoted(storage.foreignKey), pos = quoted(storage.position)
        let k = quoted(storage.key)
        let siblings = "SELECT \(k), \(pos) FROM \(t) WHERE \(fk) = ? AND \(k) IS NOT ?"
        var width = 8
        while true {
            // `width` siblings on each side (the neighbours included), then the one beyond.
            var left: [Sibling] = []
            if let before {
                left = try Row.fetchAll(
                    db, sql: "\(siblings) AND (\(pos), \(k)) <= (?, ?) ORDER BY \(pos) DESC, \(k) DESC LIMIT ?",
                    arguments: [parent, child, before.position, before.id, width + 1]
                ).map { Sibling(id: $0[0], position: $0[1]) }
            }
            var right: [Sibling] = []
            if let after {
                right = try Row.fetchAll(
                    db, sql: "\(siblings) AND (\(pos), \(k)) >= (?, ?) ORDER BY \(pos), \(k) LIMIT ?",
                    arguments: [parent, child, after.position, after.id, width + 1]
                ).map { Sibling(id: $0[0], position: $0[1]) }
            }
            let lowBound = left.count > width ? left.removeLast().position : nil
            let highBound = right.count > width ? right.removeLast().position : nil
            let window = left.reversed() + right
            // The window, the new child's slot, and one spacing at each end.
            let slots = Int64(window.count + 2)
            let low = lowBound ?? ((window.first?.position ?? 0) - gap * slots)
            let high = highBound ?? ((window.last?.position ?? 0) + gap * slots)
            let exhausted = lowBound == nil && highBound == nil
            if high > low, (high - low) / slots >= minimumSpacing || exhausted {
                let spacing = min(gap, (high - low) / slots)
                guard spacing >= 2 else { throw OrderError.noRoom(entity: storage.table, parent: parent) }
                var next = low
                var written = 0
                let update = try db.makeStatement(sql: "UPDATE \(t) SET \(pos) = ? WHERE \(k) = ?")
                for (index, sibling) in window.enumerated() {
                    next += spacing
                    if index == left.count { next += spacing }  // the child's slot
                    if sibling.position != next {
                        try update.execute(arguments: [next, sibling.id])
                        written += 1
                    }
                }
                return written
            }
            width *= 2
        }
    }

    /// Numbers every sibling ``gap`` apart, in their current order (NULL positions first).
    private static func renumber(parent: Int64, except child: Int64, _ storage: Storage, _ db: Database) throws -> Int {
        let t = quoted(storage.table), fk = quoted(storage.foreignKey), pos = quoted(storage.position)
        let k = quoted(storage.key)
        let ids = try Int64.fetchAll(
            db, sql: "SELECT \(k) FROM \(t) WHERE \(fk) = ? AND \(k) IS NOT ? ORDER BY \(pos), \(k)",
            arguments: [parent, child])
        let update = try db.makeStatement(sql: "UPDATE \(t) SET \(pos) = ? WHERE \(k) = ?")
        for (index, id) in ids.enumerated() { try update.execute(arguments: [Int64(index + 1) * gap, id]) }
        return ids.count
    }
}

/// What a write on an ordered relationship wrote.
public struct OrderWrite: Hashable, Sendable {
    /// The rows written: the child's, plus those of a rebalance.
    public var rowsWritten: Int
    /// The sibling rows a local rebalance renumbered (0 when none ran).
    public var rebalancedRows: Int

    /// A count of written rows.
    public init(rowsWritten: Int, rebalancedRows: Int) {
        self.rowsWritten = rowsWritten
        self.rebalancedRows = rebalancedRows
    }

    /// True when the write had to renumber siblings to make room.
    public var didRebalance: Bool { rebalancedRows > 0 }
}

/// Why a write on an ordered relationship was refused; nothing was written.
public enum OrderError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The relationship is not an ordered to-many (`ordered: true`) of this model.
    case notOrdered(entity: String, relationship: String)
    /// No object `id` of `entity`.
    case notFound(entity: String, id: Int64)
    /// The object `id` is not a child of `parent` in this relationship.
    case notASibling(entity: String, id: Int64, parent: Int64)
    /// `index` is not a place in a list of `count` (valid: `0...count`).
    case indexOutOfRange(index: Int, count: Int)
    /// The inverse to-one is required, so the child cannot leave its parent: delete it instead.
    case requiredParent(entity: String, relationship: String)
    /// No position was left between two siblings even after a rebalance (positions near
    /// the limits of 64-bit integers, written by raw SQL).
    case noRoom(entity: String, parent: Int64)

    /// The message, naming the entity, ids and what to do.
    public var description: String {
        switch self {
        case .notOrdered(let entity, let relationship):
            "'\(entity).\(relationship)' is not an ordered to-many relationship; declare it with 'ordered: true'"
        case .notFound(let entity, let id):
            "no \(entity) with id \(id)"
        case .notASibling(let entity, let id, let parent):
            "\(entity) \(id) is not a child of \(parent) in this relationship"
        case .indexOutOfRange(let index, let count):
            "index \(index) is not a place in a list of \(count) (0...\(count))"
        case .requiredParent(let entity, let relationship):
            "'\(entity).\(relationship)' is required, so an object cannot leave its parent; delete it instead"
        case .noRoom(let entity, let parent):
            "no room left between two positions of \(entity) under parent \(parent)"
        }
    }
}
