import GRDB

/// The schemas of the stores opened in this process, so that typed operations on a GRDB
/// `Database` can find the model an entity belongs to (for paths through relationships).
enum SchemaRegistry {
    private static let schemas = LockedValue<[SchemaDescriptor]>([])

    static func register(_ schema: SchemaDescriptor) {
        schemas.withLock { list in
            if !list.contains(schema) { list.append(schema) }
        }
    }

    /// The registered schema that has exactly this entity; a schema of this entity alone
    /// otherwise.
    static func schema(of entity: EntityDescriptor) -> SchemaDescriptor {
        schemas.withLock { list in
            list.last { $0.entity(named: entity.name) == entity }
        } ?? SchemaDescriptor(name: entity.name, entities: [entity])
    }

    /// The primary key of the entity called `name` in the last registered schema that has
    /// one; `id` when none has (for error messages, which name the row).
    static func primaryKey(ofEntity name: String) -> String {
        schemas.withLock { list in
            list.last { $0.entity(named: name) != nil }?.entity(named: name)?.primaryKey
        } ?? "id"
    }
}

// MARK: - Typed reads

extension Database {
    /// Every object of `type`, by id.
    public func fetchAll<Entity: StrataEntity>(_ type: Entity.Type) throws -> [Entity] {
        try Entity.fetchAll(self, sql: "SELECT * FROM \(quoted(Entity.entityName)) ORDER BY \(quoted(Entity.primaryKeyName))")
    }

    /// The object of `type` with `id`, if any.
    public func fetchOne<Entity: StrataEntity>(_ type: Entity.Type, id: Entity.ID) throws -> Entity? {
        try Entity.fetchOne(self, sql: "SELECT * FROM \(quoted(Entity.entityName)) WHERE \(quoted(Entity.primaryKeyName)) = ?", arguments: [id])
    }

    /// The objects of `type` that match `predicate`, in `sort` order (then by id).
    public func fetchAll<Entity: StrataEntity>(
        _ type: Entity.Type, where predicate: EntityPredicate<Entity>? = nil, sortedBy sort: [SortKey<Entity>] = []
    ) throws -> [Entity] {
        var builder = try Self.builder(for: Entity.self)
        let sql = try builder.select(
            SQL(sql: "\(builder.rootAlias).*"), where: predicate?.node, orderBy: sort.map(\.node))
        return try Entity.fetchAll(self, SQLRequest<Entity>(literal: sql))
    }

    /// The items of a request, flat: its predicate and item sort (then id), and its window
    /// (``ResultsRequest/limit(_:offset:)``) in that order. Sections are ignored here;
    /// results controllers group items into sections.
    public func fetchAll<Entity: StrataEntity, Section>(_ request: ResultsRequest<Entity, Section>) throws -> [Entity] {
        var builder = try Self.builder(for: Entity.self)
        var sql = try builder.select(
            SQL(sql: "\(builder.rootAlias).*"), where: request.predicate?.node, orderBy: request.sortKeys.map(\.node))
        if request.isWindowed { sql += SQL(sql: " LIMIT ? OFFSET ?", arguments: [request.limit ?? -1, request.offset]) }
        return try Entity.fetchAll(self, SQLRequest<Entity>(literal: sql))
    }

    /// The number of objects of `type` that match `predicate`.
    public func fetchCount<Entity: StrataEntity>(
        _ type: Entity.Type, where predicate: EntityPredicate<Entity>? = nil
    ) throws -> Int {
        var builder = try Self.builder(for: Entity.self)
        let condition = try predicate.map { try builder.condition($0.node) } ?? "1"
        let sql: SQL = "SELECT COUNT(*) FROM \(builder.fromClause) WHERE \(condition)"
        return try Int.fetchOne(self, SQLRequest<Int>(literal: sql)) ?? 0
    }

    /// The number of items of a request, within its window.
    public func fetchCount<Entity: StrataEntity, Section>(_ request: ResultsRequest<Entity, Section>) throws -> Int {
        let count = max(0, try fetchCount(Entity.self, where: request.predicate) - request.offset)
        return request.limit.map { min($0, count) } ?? count
    }

    /// The destination of a to-one relationship of the object `id` (nil when the
    /// relationship is nil, or the object does not exist).
    public func fetchOne<Entity: StrataEntity, Destination: StrataEntity>(
        _ relationship: ToOne<Entity, Destination>, of id: Entity.ID
    ) throws -> Destination? {
        var builder = try Self.builder(for: Entity.self)
        let destinationID = try builder.value(relationship.path + [Destination.primaryKeyName])
        let sql: SQL = """
            SELECT * FROM \(SQL(sql: quoted(Destination.entityName))) WHERE \(SQL(sql: quoted(Destination.primaryKeyName))) = \
            (SELECT \(destinationID) FROM \(builder.fromClause) WHERE \(SQL(sql: builder.rootAlias)).\(SQL(sql: quoted(Entity.primaryKeyName))) = \(id))
            """
        return try Destination.fetchOne(self, SQLRequest<Destination>(literal: sql))
    }

    /// The destinations of a to-many relationship of the object `id`, in `sort` order
    /// (then by id).
    public func fetchAll<Entity: StrataEntity, Destination: StrataEntity>(
        _ relationship: ToMany<Entity, Destination>, of id: Entity.ID, sortedBy sort: [SortKey<Destination>] = []
    ) throws -> [Destination] {
        try fetchAll(Store.request(relationship, of: id, sortedBy: sort))
    }

    static func builder<Entity: StrataEntity>(for type: Entity.Type) throws -> SQLQueryBuilder {
        try SQLQueryBuilder(schema: Entity.schemaDescriptor, rootEntity: Entity.entityName)
    }
}

// MARK: - Typed writes

extension Database {
    /// Inserts `value` and returns it as stored: with its new id, and every value as a
    /// fetch reads it back (dates to the millisecond, the precision they are stored with;
    /// see `Docs/Decisions.md`), so the returned value equals a later fetch of the row.
    ///
    /// Throws ``InvalidValueError`` for a value SQLite cannot store exactly (text with a NUL
    /// character, NaN), ``UniqueConstraintError`` when a `unique` constraint of the
    /// model refuses the row (through ``Store/write(_:)``), and ``RuleViolationError`` when it
    /// breaks a rule: a value rule, a one-to-one whose destination another object already
    /// has (``RuleViolationError/Rule/oneToOne(_:)``), a required key left unset or a key
    /// pointing to a missing object (``RuleViolationError/Rule/missingDestination(_:)``).
    @discardableResult
    public func insert<Entity: StrataEntity>(_ value: Entity) throws -> Entity {
        var copy = value
        try copy.insert(self)
        return try Entity(row: Row(copy.databaseDictionary))
    }

    /// Writes the columns of `value` that differ from its stored row, and nothing when none
    /// does, so that committed-change events list exactly the changed columns (see
    /// ``CommittedChanges/TableChanges/updatedColumns``) and results controllers re-read only
    /// what depends on them. Returns whether anything was written.
    ///
    /// Throws ``StoreError/notFound(entity:id:)`` when there is no such row,
    /// ``StoreError/unsaved(entity:)`` for a value never inserted.
    ///
    /// The comparison is with the stored values themselves, not with a decoded copy, and
    /// text is compared byte for byte, so a value that reads back the same but is stored
    /// differently (text with NUL characters, a date written by raw SQL in another format,
    /// another Unicode normalization form of the same text: `"caf\u{E9}"` and
    /// `"cafe\u{301}"` are equal Swift strings but different values in the store) is written.
    @discardableResult
    public func update<Entity: StrataEntity>(_ value: Entity) throws -> Bool {
        guard value.objectID.isSaved else { throw StoreError.unsaved(entity: Entity.entityName) }
        // A cursor's row reads the statement itself, so text is read in full (past a NUL
        // character included), as SQLite compares it; a copied row would stop at the NUL.
        let sql = "SELECT * FROM \(quoted(Entity.entityName)) WHERE \(quoted(Entity.primaryKeyName)) = ?"
        let rows = try Row.fetchCursor(self, sql: sql, arguments: [value.objectID])
        guard let stored = try rows.next() else {
            throw StoreError.notFound(entity: Entity.entityName, id: value.objectID.rawValue)
        }
        let columns = Array(stored.columnNames)
        var changed: [String] = []
        for (column, new) in try value.databaseDictionary where column != Entity.primaryKeyName {
            let index = columns.firstIndex(of: column)
            let storedValue = index.map { DatabaseValueOrdering.sortValue(in: stored, at: $0) }
            if !(storedValue.map { $0.isIdentical(to: new) } ?? false) { changed.append(column) }
        }
        if changed.isEmpty { return false }
        try value.update(self, columns: changed)
        return true
    }

    /// Deletes the object `id`, applying the delete rules. Returns whether it existed.
    @discardableResult
    public func delete<Entity: StrataEntity>(_ type: Entity.Type, id: Entity.ID) throws -> Bool {
        try execute(sql: "DELETE FROM \(quoted(Entity.entityName)) WHERE \(quoted(Entity.primaryKeyName)) = ?", arguments: [id])
        return changesCount > 0
    }

    /// Deletes `value`'s row, applying the delete rules. Returns whether it existed.
    @discardableResult
    public func delete<Entity: StrataEntity>(_ value: Entity) throws -> Bool {
        try delete(Entity.self, id: value.objectID)
    }

    /// Deletes the objects that match `predicate`, applying the delete rules. Returns how
    /// many objects of `type` were deleted (cascaded deletes not counted).
    @discardableResult
    public func delete<Entity: StrataEntity>(_ type: Entity.Type, where predicate: EntityPredicate<Entity>) throws -> Int {
        var builder = try Self.builder(for: Entity.self)
        let condition = try builder.condition(predicate.node)
        let alias = SQL(sql: builder.rootAlias), key = SQL(sql: quoted(Entity.primaryKeyName))
        let sql: SQL = """
            DELETE FROM \(SQL(sql: quoted(Entity.entityName))) WHERE \(key) IN \
            (SELECT \(alias).\(key) FROM \(builder.fromClause) WHERE \(condition))
            """
        let (text, arguments) = try sql.build(self)
        try execute(sql: text, arguments: arguments)
        return changesCount
    }

    /// Adds `destination` to the to-many relationship of the object `id`: a join row for a
    /// many-to-many relationship (nothing if already linked), the destination's foreign
    /// key for a one-to-many one. A many-to-many that is its own inverse (`Person.friends`)
    /// is symmetric: linking b to a when a is linked to b (a row stored either way round)
    /// writes nothing.
    public func link<Entity: StrataEntity, Destination: StrataEntity>(
        _ id: Entity.ID, _ relationship: ToMany<Entity, Destination>, _ destination: Destination.ID
    ) throws {
        switch try Self.storage(of: relationship) {
        case .join(let table, let column, let inverseColumn):
            try execute(
                sql: "INSERT OR IGNORE INTO \(quoted(table)) (\(quoted(column)), \(quoted(inverseColumn))) VALUES (?, ?)",
                arguments: [id, destination])
        case .symmetricJoin(let table, let column, let inverseColumn):
            let (table, column, inverseColumn) = (quoted(table), quoted(column), quoted(inverseColumn))
            try execute(
                sql: """
                    INSERT OR IGNORE INTO \(table) (\(column), \(inverseColumn)) SELECT ?, ? \
                    WHERE NOT EXISTS (SELECT 1 FROM \(table) WHERE \(column) = ? AND \(inverseColumn) = ?)
                    """,
                arguments: [id, destination, destination, id])
        case .foreignKey(let column):
            try execute(
                sql: "UPDATE \(quoted(Destination.entityName)) SET \(quoted(column)) = ? WHERE \(quoted(Destination.primaryKeyName)) = ?",
                arguments: [id, destination])
        }
    }

    /// Removes `destination` from the to-many relationship of the object `id`: deletes the
    /// join row, or sets the destination's foreign key to NULL if it points at `id`. For a
    /// many-to-many that is its own inverse, deletes the link whichever way it is stored.
    public func unlink<Entity: StrataEntity, Destination: StrataEntity>(
        _ id: Entity.ID, _ relationship: ToMany<Entity, Destination>, _ destination: Destination.ID
    ) throws {
        switch try Self.storage(of: relationship) {
        case .join(let table, let column, let inverseColumn):
            try execute(
                sql: "DELETE FROM \(quoted(table)) WHERE \(quoted(column)) = ? AND \(quoted(inverseColumn)) = ?",
                arguments: [id, destination])
        case .symmetricJoin(let table, let column, let inverseColumn):
            let (column, inverseColumn) = (quoted(column), quoted(inverseColumn))
            try execute(
                sql: """
                    DELETE FROM \(quoted(table)) WHERE (\(column) = ? AND \(inverseColumn) = ?) \
                    OR (\(column) = ? AND \(inverseColumn) = ?)
                    """,
                arguments: [id, destination, destination, id])
        case .foreignKey(let column):
            try execute(
                sql: "UPDATE \(quoted(Destination.entityName)) SET \(quoted(column)) = NULL WHERE \(quoted(Destination.primaryKeyName)) = ? AND \(quoted(column)) = ?",
                arguments: [destination, id])
        }
    }

    private enum ToManyStorage {
        case join(String, String, String)
        /// A many-to-many that is its own inverse: a link is one row in either order.
        case symmetricJoin(String, String, String)
        case foreignKey(String)
    }

    private static func storage<Entity: StrataEntity, Destination: StrataEntity>(
        of relationship: ToMany<Entity, Destination>
    ) throws -> ToManyStorage {
        guard relationship.path.count == 1, let descriptor = Entity.entityDescriptor.relationship(named: relationship.path[0])
        else { throw StoreError.invalidRelationship(entity: Entity.entityName, relationship: relationship.path.joined(separator: ".")) }
        if let join = Entity.entityDescriptor.symmetricJoinTable(descriptor) {
            return .symmetricJoin(join.name, join.column, join.inverseColumn)
        }
        switch descriptor.storage {
        case .joinTable(let table, let column, let inverseColumn):
            return .join(table, column, inverseColumn)
        case .inverseForeignKey:
            guard let inverse = Destination.entityDescriptor.relationship(named: descriptor.inverse),
                  case .foreignKey(let column) = inverse.storage
            else { throw StoreError.invalidRelationship(entity: Entity.entityName, relationship: descriptor.name) }
            return .foreignKey(column)
        case .foreignKey:
            throw StoreError.invalidRelationship(entity: Entity.entityName, relationship: descriptor.name)
        }
    }
}

// MARK: - Requests for relationships

extension Store {
    /// A request for the destinations of a to-many relationship of the object `id` — for
    /// a results controller, or `Database.fetchAll(_:)` with the request.
    /// For a many-to-many that is its own inverse, the people linked to `id` by a join row
    /// stored either way round (`id` itself once, when linked to itself).
    ///
    /// ```swift
    /// let request = Store.request(Notebook.notes, of: notebook.id, sortedBy: [Note.title.ascending])
    /// ```
    public static func request<Entity: StrataEntity, Destination: StrataEntity>(
        _ relationship: ToMany<Entity, Destination>, of id: Entity.ID, sortedBy sort: [SortKey<Destination>] = []
    ) throws -> ResultsRequest<Destination, NoSection> {
        guard relationship.path.count == 1,
              let descriptor = Entity.entityDescriptor.relationship(named: relationship.path[0]),
              descriptor.isToMany
        else { throw StoreError.invalidRelationship(entity: Entity.entityName, relationship: relationship.path.joined(separator: ".")) }
        let predicate: PredicateNode
        switch descriptor.storage {
        case .joinTable:
            predicate = .quantified(
                .any, relationship: [descriptor.inverse], .compare(.path([Entity.primaryKeyName]), .equal, .value(id.databaseValue)))
        default:
            predicate = .compare(.path([descriptor.inverse, Entity.primaryKeyName]), .equal, .value(id.databaseValue))
        }
        return ResultsRequest(where: EntityPredicate(predicate), sortedBy: sort)
    }
}

// MARK: - One-shot conveniences

extension Store {
    /// Inserts `value` in its own transaction and returns it with its id.
    @discardableResult
    public func insert<Entity: StrataEntity>(_ value: Entity) throws -> Entity {
        try write { db in try db.insert(value) }
    }

    /// Updates `value` in its own transaction: writes the columns that differ from its stored
    /// row (see `Database.update(_:)`). Returns whether anything was written.
    @discardableResult
    public func update<Entity: StrataEntity>(_ value: Entity) throws -> Bool {
        try write { db in try db.update(value) }
    }

    /// Deletes `value` in its own transaction, applying the delete rules.
    @discardableResult
    public func delete<Entity: StrataEntity>(_ value: Entity) throws -> Bool {
        try write { db in try db.delete(value) }
    }

    /// The items of a request, flat (see `Database.fetchAll(_:)` with a request).
    public func fetchAll<Entity: StrataEntity, Section>(_ request: ResultsRequest<Entity, Section>) throws -> [Entity] {
        try read { db in try db.fetchAll(request) }
    }

    /// The object of `type` with `id`, if any.
    public func fetchOne<Entity: StrataEntity>(_ type: Entity.Type, id: Entity.ID) throws -> Entity? {
        try read { db in try db.fetchOne(type, id: id) }
    }

    /// Every object of `type`, by id, in one read.
    ///
    /// ```swift
    /// let notes = try store.fetchAll(Note.self)
    /// ```
    public func fetchAll<Entity: StrataEntity>(_ type: Entity.Type) throws -> [Entity] {
        try read { db in try db.fetchAll(type) }
    }

    /// The objects of `type` that match `predicate`, in `sort` order (then by id).
    ///
    /// ```swift
    /// let urgent = try store.fetchAll(Note.self, where: Note.priority == .high, sortedBy: [Note.title.ascending])
    /// ```
    public func fetchAll<Entity: StrataEntity>(
        _ type: Entity.Type, where predicate: EntityPredicate<Entity>? = nil, sortedBy sort: [SortKey<Entity>] = []
    ) throws -> [Entity] {
        try read { db in try db.fetchAll(type, where: predicate, sortedBy: sort) }
    }

    /// The number of objects of `type` that match `predicate` (all of them without one).
    public func fetchCount<Entity: StrataEntity>(
        _ type: Entity.Type, where predicate: EntityPredicate<Entity>? = nil
    ) throws -> Int {
        try read { db in try db.fetchCount(type, where: predicate) }
    }

    /// The number of items of a request (a generated fetch such as `Note.Fetches.search(text:)`).
    public func fetchCount<Entity: StrataEntity, Section>(_ request: ResultsRequest<Entity, Section>) throws -> Int {
        try read { db in try db.fetchCount(request) }
    }
}

// MARK: - One-shot reads, asynchronous

extension Store {
    /// The items of a request, flat, read off the caller's thread.
    public func fetchAll<Entity: StrataEntity, Section>(_ request: ResultsRequest<Entity, Section>) async throws -> [Entity] {
        try await read { db in try db.fetchAll(request) }
    }

    /// The object of `type` with `id`, if any, read off the caller's thread.
    public func fetchOne<Entity: StrataEntity>(_ type: Entity.Type, id: Entity.ID) async throws -> Entity? {
        try await read { db in try db.fetchOne(type, id: id) }
    }

    /// Every object of `type`, by id, read off the caller's thread.
    public func fetchAll<Entity: StrataEntity>(_ type: Entity.Type) async throws -> [Entity] {
        try await read { db in try db.fetchAll(type) }
    }

    /// The objects of `type` that match `predicate`, in `sort` order (then by id), read off
    /// the caller's thread.
    public func fetchAll<Entity: StrataEntity>(
        _ type: Entity.Type, where predicate: EntityPredicate<Entity>? = nil, sortedBy sort: [SortKey<Entity>] = []
    ) async throws -> [Entity] {
        try await read { db in try db.fetchAll(type, where: predicate, sortedBy: sort) }
    }

    /// The number of objects of `type` that match `predicate`, read off the caller's thread.
    public func fetchCount<Entity: StrataEntity>(
        _ type: Entity.Type, where predicate: EntityPredicate<Entity>? = nil
    ) async throws -> Int {
        try await read { db in try db.fetchCount(type, where: predicate) }
    }

    /// The number of items of a request, read off the caller's thread.
    public func fetchCount<Entity: StrataEntity, Section>(_ request: ResultsRequest<Entity, Section>) async throws -> Int {
        try await read { db in try db.fetchCount(request) }
    }
}

extension DatabaseValue {
    /// Whether the two values are stored identically: the same storage class and value,
    /// text compared byte for byte (Swift's `==` on `String` treats canonically equivalent
    /// text as equal; SQLite does not).
    func isIdentical(to other: DatabaseValue) -> Bool {
        switch (storage, other.storage) {
        case (.null, .null): true
        case (.int64(let a), .int64(let b)): a == b
        case (.double(let a), .double(let b)): a == b
        case (.string(let a), .string(let b)): a.utf8.elementsEqual(b.utf8)
        case (.blob(let a), .blob(let b)): a == b
        default: false
        }
    }
}
