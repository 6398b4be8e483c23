import GRDB

// MARK: - Writes on ordered relationships

/// Typed writes on the order of an ordered to-many relationship (`ordered: true`): each is
/// one `UPDATE` of the child's row (its parent and position), plus, rarely, a local
/// rebalance of a few siblings (see `Docs/Decisions.md`, *Ordered relationships*). Run them
/// inside ``Store/write(_:)``; each returns what it wrote.
///
/// ```swift
/// try store.write { db in
///     try db.append(task.id, to: TaskList.tasks, of: inbox.id)
///     try db.move(task.id, in: TaskList.tasks, of: inbox.id, to: 0)          // first
///     try db.insert(task.id, into: TaskList.tasks, of: today.id, at: 2)      // to another list
///     try db.remove(task.id, from: TaskList.tasks, of: today.id)             // no list
/// }
/// ```
///
/// Indexes count the parent's children in order, the child itself left out: `at: 0` is
/// first, `at: count` last. They throw ``OrderError`` (and write nothing) for a relationship
/// that is not ordered, an index outside `0...count`, or a child or sibling that is not
/// where the call says.
extension Database {
    /// Makes `child` the last child of `parent` (moving it from another parent, or to the
    /// end of the same one).
    @discardableResult
    public func append<Parent: StrataEntity, Child: StrataEntity>(
        _ child: Child.ID, to relationship: ToMany<Parent, Child>, of parent: Parent.ID
    ) throws -> OrderWrite {
        try OrderedPositions.place(
            child.rawValue, parent: parent.rawValue, at: .end, try Self.orderStorage(relationship), self)
    }

    /// Makes `child` the child of `parent` at `index` (0 first, the number of other
    /// children last), moving it from its current parent if it has one.
    @discardableResult
    public func insert<Parent: StrataEntity, Child: StrataEntity>(
        _ child: Child.ID, into relationship: ToMany<Parent, Child>, of parent: Parent.ID, at index: Int
    ) throws -> OrderWrite {
        try OrderedPositions.place(
            child.rawValue, parent: parent.rawValue, at: .index(index), try Self.orderStorage(relationship), self)
    }

    /// Moves `child`, a child of `parent`, to `index` among its siblings (0 first).
    /// Throws ``OrderError/notASibling(entity:id:parent:)`` when it is not a child of `parent`.
    @discardableResult
    public func move<Parent: StrataEntity, Child: StrataEntity>(
        _ child: Child.ID, in relationship: ToMany<Parent, Child>, of parent: Parent.ID, to index: Int
    ) throws -> OrderWrite {
        let storage = try Self.orderStorage(relationship)
        try requireChild(child.rawValue, of: parent.rawValue, storage)
        return try OrderedPositions.place(child.rawValue, parent: parent.rawValue, at: .index(index), storage, self)
    }

    /// Moves `child` (of any parent, or none) into `parent`, right after its child `sibling`.
    @discardableResult
    public func move<Parent: StrataEntity, Child: StrataEntity>(
        _ child: Child.ID, in relationship: ToMany<Parent, Child>, of parent: Parent.ID, after sibling: Child.ID
    ) throws -> OrderWrite {
        try OrderedPositions.place(
            child.rawValue, parent: parent.rawValue, at: .after(sibling.rawValue), try Self.orderStorage(relationship),
            self)
    }

    /// Moves `child` (of any parent, or none) into `parent`, right before its child `sibling`.
    @discardableResult
    public func move<Parent: StrataEntity, Child: StrataEntity>(
        _ child: Child.ID, in relationship: ToMany<Parent, Child>, of parent: Parent.ID, before sibling: Child.ID
    ) throws -> OrderWrite {
        try OrderedPositions.place(
            child.rawValue, parent: parent.rawValue, at: .before(sibling.rawValue), try Self.orderStorage(relationship),
            self)
    }

    /// Takes `child` out of `parent`'s list: its parent becomes nil and it loses its
    /// position; its siblings keep theirs. Throws ``OrderError/requiredParent(entity:relationship:)``
    /// when the inverse to-one is required (delete the child instead).
    @discardableResult
    public func remove<Parent: StrataEntity, Child: StrataEntity>(
        _ child: Child.ID, from relationship: ToMany<Parent, Child>, of parent: Parent.ID
    ) throws -> OrderWrite {
        let storage = try Self.orderStorage(relationship)
        if let descriptor = Parent.entityDescriptor.relationship(named: relationship.path[0]),
           Child.entityDescriptor.relationship(named: descriptor.inverse)?.isRequired == true
        {
            throw OrderError.requiredParent(entity: Child.entityName, relationship: descriptor.inverse)
        }
        try requireChild(child.rawValue, of: parent.rawValue, storage)
        try execute(
            sql: "UPDATE \(quoted(storage.table)) SET \(quoted(storage.foreignKey)) = NULL, \(quoted(storage.position)) = NULL WHERE \(quoted(storage.key)) = ?",
            arguments: [child.rawValue])
        return OrderWrite(rowsWritten: 1, rebalancedRows: 0)
    }

    /// The children of `parent` in their stored order.
    public func fetchOrdered<Parent: StrataEntity, Child: StrataEntity>(
        _ relationship: ToMany<Parent, Child>, of parent: Parent.ID
    ) throws -> [Child] {
        let storage = try Self.orderStorage(relationship)
        return try Child.fetchAll(
            self,
            sql: "SELECT * FROM \(quoted(storage.table)) WHERE \(quoted(storage.foreignKey)) = ? ORDER BY \(quoted(storage.position)), \(quoted(storage.key))",
            arguments: [parent.rawValue])
    }

    private func requireChild(_ child: Int64, of parent: Int64, _ storage: OrderedPositions.Storage) throws {
        let current = try Row.fetchOne(
            self, sql: "SELECT \(quoted(storage.foreignKey)) FROM \(quoted(storage.table)) WHERE \(quoted(storage.key)) = ?",
            arguments: [child])
        guard let current else { throw OrderError.notFound(entity: storage.table, id: child) }
        guard (current[0] as Int64?) == parent else {
            throw OrderError.notASibling(entity: storage.table, id: child, parent: parent)
        }
    }

    static func orderStorage<Parent: StrataEntity, Child: StrataEntity>(
        _ relationship: ToMany<Parent, Child>
    ) throws -> OrderedPositions.Storage {
        let name = relationship.path.joined(separator: ".")
        guard relationship.path.count == 1, let descriptor = Parent.entityDescriptor.relationship(named: name),
              descriptor.isToMany, descriptor.isOrdered,
              let inverse = Child.entityDescriptor.relationship(named: descriptor.inverse),
              case .foreignKey(let column) = inverse.storage, let position = inverse.positionColumn
        else { throw OrderError.notOrdered(entity: Parent.entityName, relationship: name) }
        return OrderedPositions.Storage(table: Child.entityName, foreignKey: column, position: position, key: Child.primaryKeyName)
    }
}
