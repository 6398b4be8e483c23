import Foundation
import GRDB
import GRDBSQLite
import Strata

/// Applies the server's state to the store, inside one of the sync's write transactions:
/// pulled changes, and the answers to pushes.
///
/// The rule for an object both sides changed: per column, the side that reached the server
/// last wins. A column this device changed and has not pushed yet (its value differs from
/// the object's base) keeps the device's value, which its next push sends; every other
/// column takes the server's. A deletion wins over updates, from either side.
struct PullApplier {
    let tables: SyncedTables
    let options: SyncOptions
    /// The store (for its count rules, checked before the pull's transaction commits).
    let store: Store
    /// Whether ``attempt(_:_:_:)`` runs each change in a savepoint of its own, recording a
    /// change that a rule of this store refuses and going on; when false, a refusal is thrown
    /// (``apply(_:_:)`` then starts again with savepoints).
    var isolatesChanges = true
    var rows: LocalRows { LocalRows(tables: tables) }

    /// Thrown by ``apply(_:prepared:_:)`` when a rule of this store refuses a batch's bulk
    /// insert: the transaction is to be rolled back, and the batch applied again without it.
    struct BulkInsertRefused: Error {
        var error: any Error
    }

    /// A bulk insert's object refers to an object this store does not hold.
    struct MissingDestination: Error {
        var syncID: String
    }

    /// Applies a pull; returns true when a change could not be applied here (see
    /// ``StoreSync/pull()``: the server is read again from the start at the next pull).
    /// `prepared`: the batch's objects from ``prepare(_:)``, tried in bulk when the store knows
    /// none of them; when a rule of this store refuses that, ``BulkInsertRefused`` is thrown
    /// (roll the transaction back, and apply the batch again with `prepared` nil).
    /// `assumingNew`: the caller expects the store to know none of them (a pull that began on a
    /// store without sync ids, whose earlier batches held none of them), so the store is not
    /// searched for them first. The insert of their sync ids is the check either way: it fails
    /// on any sync id the store has (an object's or a tombstone's), and that failure is thrown
    /// as ``BulkInsertRefused``, so a wrong guess costs a try, never a different result.
    @discardableResult
    func apply(_ changes: [SyncChange], prepared: NewObjects?, assumingNew: Bool = false, _ db: Database) throws -> Bool {
        try apply(PullBatch(SyncPullResult(changes: changes, cursor: 0, hasMore: false)), prepared: prepared, assumingNew: assumingNew, db)
    }

    /// ``apply(_:prepared:assumingNew:_:)-([SyncChange],_,_,_)`` of a batch: its list of
    /// changes is made only when the batch does not go in bulk.
    @discardableResult
    func apply(_ batch: PullBatch, prepared: NewObjects?, assumingNew: Bool = false, _ db: Database) throws -> Bool {
        let before = try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(seq), 0) FROM stratasync_conflicts") ?? 0
        try withSyncDeletes(db) {
            // Every change at once first, in one savepoint; when a rule of this store refuses
            // one, that try is rolled back and every change is applied again, each in a
            // savepoint of its own (the refused ones recorded). The result is the same as with
            // a savepoint per change, which a pull of thousands of rows need not pay for.
            var together = self
            together.isolatesChanges = false
            // A batch of objects this store does not know yet (an initial sync, say) is first
            // tried in bulk, as the transaction's first change and without a savepoint: in a
            // savepoint, GRDB copies and holds every row's change event until its end, and
            // SQLite's statement journal grows with every statement. When a rule of this store
            // refuses any of it, the whole transaction is rolled back, and the batch goes the
            // way below in another, as if never tried.
            // (Searching the store for every sync id of a batch of 20,000 took about a tenth of
            // the writer's time in an initial sync.)
            if options.insertsInBulk, let upserts = prepared, try assumingNew || isNew(upserts, db) {
                do {
                    try together.applyChanges(batch.changesOtherThanInserts, newObjects: upserts, db)
                    if let broken = try store.brokenCountRules(db).first { throw broken }
                } catch let error where Self.isRefusal(error) || error is RuleViolationError {
                    options.logger.debug("a batch of \(upserts.count) new objects refused in bulk, applied change by change: \(error)")
                    throw BulkInsertRefused(error: error)
                }
                options.logger.debug("\(upserts.count) new objects inserted in bulk\(assumingNew ? " (the store not searched)" : "")")
                return []
            }
            let changes = batch.changes
            do {
                try db.inSavepoint {
                    try together.applyChanges(changes, db)
                    if let broken = try store.brokenCountRules(db).first { throw broken }
                    return .commit
                }
            } catch let error where Self.isRefusal(error) || error is RuleViolationError {
                try applyKeepingCounts(changes, db)
            }
            return []
        }
        return try Bool.fetchOne(
            db, sql: "SELECT 1 FROM stratasync_conflicts WHERE seq > ? AND kind = ?",
            arguments: [before, SyncConflict.Kind.notAppliedHere.rawValue]) ?? false
    }

    /// Applies `changes` each in a savepoint of its own; then, while a count rule of this
    /// store is broken (checked at commit, so no savepoint of one change can catch it: the
    /// server does not know every rule, or was written by a service that bypassed it), sets
    /// aside the pulled changes that touch the owners out of range and applies the others
    /// again. Those set aside are recorded (``SyncConflict/Kind/notAppliedHere``), so the
    /// server is read again from the start at the next pull, and the rest is applied.
    private func applyKeepingCounts(_ changes: [SyncChange], _ db: Database) throws {
        var setAside: [Int: String] = [:]  // index → why
        while true {
            var broken: [RuleViolationError] = []
            try db.inSavepoint {
                try applyChanges(changes.indices.filter { setAside[$0] == nil }.map { changes[$0] }, db)
                broken = try store.brokenCountRules(db)
                return broken.isEmpty ? .commit : .rollback
            }
            guard let first = broken.first else { break }
            var more = false
            for violation in broken {
                for index in try touching(violation, changes, db) where setAside[index] == nil {
                    setAside[index] = "\(violation)"
                    more = true
                }
            }
            if !more, let last = changes.indices.last(where: { changes[$0].kind == .delete && setAside[$0] == nil }) {
                setAside[last] = "\(first)"  // a delete rule here took the destinations with it
                more = true
            }
            guard more else { throw first }
        }
        for (index, reason) in setAside.sorted(by: { $0.key < $1.key }) {
            let change = changes[index]
            options.logger.debug("not applied here (a count rule): \(change.kind) \(change.table) \(change.id?.uuidString ?? "\(change.link ?? [:])")")
            let values = change.link.map { $0.mapValues { Optional($0.uuidString.lowercased()) } } ?? change.values
            try SyncConflict.record(
                .notAppliedHere, table: change.table, object: change.id, reason: "a count rule here: \(reason)", local: nil,
                server: values, db)
        }
    }

    /// The indices of the pulled `changes` that change the count `violation` names, as this
    /// store holds it before the pull: the owner's own row, its links (a many-to-many) or
    /// the destinations that come to it, leave it or are deleted (a one-to-many).
    func touching(_ violation: RuleViolationError, _ changes: [SyncChange], _ db: Database) throws -> [Int] {
        guard let id = violation.id, let owner = try rows.uuid(violation.entity, id, db),
              let relationship = tables.schema.entity(named: violation.entity)?.relationship(named: violation.member)
        else { return [] }
        var result: [Int] = []
        switch relationship.storage {
        case .joinTable(let name, let column, let inverseColumn):
            let linked = Set(try String.fetchAll(db, sql: """
                SELECT o.uuid FROM \(quoted(name)) j JOIN stratasync_objects o ON o.tbl = ? AND o.rowid_ = j.\(quoted(inverseColumn)) \
                WHERE j.\(quoted(column)) = ?
                """, arguments: [relationship.destination, id]))
            for (index, change) in changes.enumerated() {
                if change.table == name, change.link?[column]?.uuidString.lowercased() == owner {
                    result.append(index)
                } else if change.kind == .delete, change.table == relationship.destination,
                          let other = change.id?.uuidString.lowercased(), linked.contains(other)
                {
                    result.append(index)
                }
            }
        case .inverseForeignKey:
            guard case .foreignKey(let column)? = tables.schema.entity(named: relationship.destination)?
                .relationship(named: relationship.inverse)?.storage,
                  let destination = tables.entity(named: relationship.destination)
            else { return [] }
            let here = Set(try String.fetchAll(db, sql: """
                SELECT o.uuid FROM \(quoted(destination.name)) d JOIN stratasync_objects o ON o.tbl = ? AND o.rowid_ = d.\(quoted(destination.primaryKey)) \
                WHERE d.\(quoted(column)) = ?
                """, arguments: [destination.name, id]))
            for (index, change) in changes.enumerated() where change.table == destination.name {
                guard let other = change.id?.uuidString.lowercased() else { continue }
                let comes = (change.values[column] ?? nil)?.lowercased() == owner
                if here.contains(other) || (change.kind == .insert && comes) { result.append(index) }
            }
        case .foreignKey:
            break
        }
        for (index, change) in changes.enumerated() where change.table == violation.entity && change.id?.uuidString.lowercased() == owner {
            result.append(index)
        }
        return result
    }

    /// Applies `changes`: objects, then links, then deletions. `newObjects`: the batch's
    /// upserts from ``prepare(_:)``, inserted in bulk.
    private func applyChanges(_ changes: [SyncChange], newObjects: NewObjects? = nil, _ db: Database) throws {
        if let newObjects {
            try insertNew(newObjects, db)
        } else {
            for change in ordered(changes.filter { $0.kind == .insert }) { try upsert(change, db) }
        }
        for change in changes where change.kind == .link || change.kind == .unlink { try applyLink(change, db) }
        let deletes = changes.filter { $0.kind == .delete }
        if !deletes.isEmpty { try undoPendingReferences(to: deletes, db) }
        for change in deletes { try delete(change, db) }
    }

    /// Server rows, each after the rows of the same batch it refers to.
    func ordered(_ upserts: [SyncChange]) -> [SyncChange] {
        // By index, with each entity's references read once: copying the changes into a
        // dictionary, and reading the references per change, cost more than the ordering.
        var byID: [UUID: Int] = [:]
        byID.reserveCapacity(upserts.count)
        for (index, change) in upserts.enumerated() { if let id = change.id { byID[id] = index } }
        var references: [String: [String]] = [:]
        for entity in tables.entities { references[entity.name] = entity.references.map(\.column) }
        var state: Set<UUID> = []
        state.reserveCapacity(upserts.count)
        var result: [SyncChange] = []
        result.reserveCapacity(upserts.count)
        func visit(_ index: Int) {
            let change = upserts[index]
            guard let id = change.id, state.insert(id).inserted else { return }
            for column in references[change.table] ?? [] {
                if let text = change.values[column] ?? nil, let target = SyncValue.uuid(text), let next = byID[target] {
                    visit(next)
                }
            }
            result.append(change)
        }
        for name in tables.dependencyOrder {
            for index in upserts.indices where upserts[index].table == name { visit(index) }
        }
        return result
    }

    /// Runs `body`, then drops the tombstones its deletions left (they need no push: the
    /// server did the same, or holds the object elsewhere, and the server is then read
    /// again), and records the objects never pushed that its deletions took with them (a
    /// delete rule here, after a deletion from the server).
    /// `body` returns the sync ids of objects whose loss it recorded itself.
    func withSyncDeletes(_ db: Database, _ body: () throws -> Set<String>) throws {
        let tombstones = Set(try String.fetchAll(db, sql: "SELECT uuid FROM stratasync_objects WHERE deleted = 1"))
        let unpushed = try Row.fetchAll(db, sql: "SELECT uuid, tbl, rowid_ FROM stratasync_objects WHERE deleted = 0 AND base IS NULL")
        var unpushedValues: [String: (table: String, values: [String: String?]?)] = [:]
        for (table, group) in Dictionary(grouping: unpushed, by: { $0["tbl"] as String }) {
            guard let entity = tables.entity(named: table) else { continue }
            let values = try rows.values(entity, group.map { $0["rowid_"] }, db)
            for row in group { unpushedValues[row["uuid"]] = (table, values[row["rowid_"]]) }
        }
        let recorded = try body()
        var readAgain = false
        for row in try Row.fetchAll(db, sql: "SELECT uuid, tbl, base FROM stratasync_objects WHERE deleted = 1") {
            let uuid: String = row["uuid"]
            guard !tombstones.contains(uuid) else { continue }
            try rows.forget(uuid, db)
            // Deleted here by a delete rule, with an object the server deleted or refused,
            // though the server holds this one (it was pushed, and the server did not delete it
            // in what this device has read): it must not be lost here. The tombstone goes (it
            // is not a deletion to push), and the server is read again, which brings the object
            // back where the server has it.
            guard let base = row["base"] as String?, !recorded.contains(uuid) else {
                options.logger.trace("deleted here with the server: \(row["tbl"] as String) \(uuid)")
                continue
            }
            options.logger.debug("deleted here by a delete rule, kept by the server: \(row["tbl"] as String) \(uuid)")
            try SyncConflict.record(
                .notAppliedHere, table: row["tbl"], object: UUID(uuidString: uuid),
                reason: "deleted here by a delete rule with an object the server deleted or refused, while the server holds it elsewhere: read again from the server",
                local: LocalSyncState.decode(base), server: nil, db)
            readAgain = true
        }
        if readAgain { try LocalSyncState.set("rescan", "1", db) }
        if !unpushedValues.isEmpty {
            var live: Set<String> = []
            let ids = Array(unpushedValues.keys)
            for start in stride(from: 0, to: ids.count, by: 500) {
                let chunk = Array(ids[start..<min(start + 500, ids.count)])
                let marks = Array(repeating: "?", count: chunk.count).joined(separator: ",")
                live.formUnion(try String.fetchAll(
                    db, sql: "SELECT uuid FROM stratasync_objects WHERE deleted = 0 AND uuid IN (\(marks))", arguments: StatementArguments(chunk)))
            }
            for (uuid, object) in unpushedValues where !live.contains(uuid) && !recorded.contains(uuid) {
                try SyncConflict.record(
                    .deletedOnServer, table: object.table, object: UUID(uuidString: uuid),
                    reason: "created here and not pushed yet, then deleted here by a delete rule when the server deleted an object it belonged to",
                    local: object.values, server: nil, db)
            }
        }
    }

    // MARK: - Objects

    /// Inserts or updates an object with the server's values, keeping the columns changed
    /// here and not pushed yet.
    func upsert(_ change: SyncChange, _ db: Database) throws {
        guard let entity = tables.entity(named: change.table), let id = change.id else { return }
        let uuid = id.uuidString.lowercased()
        let server = change.values.filter { entity.column(named: $0.key) != nil }
        let record = try rows.record(uuid, db)  // the object, or its tombstone
        if let record, !record.deleted {
            let object = (rowid: record.rowid, base: record.base)
            var wanted = server
            var pending: Set<String> = []  // the columns changed here, not pushed yet
            if let base = object.base {
                let current = try rows.values(entity, [object.rowid], db)[object.rowid] ?? [:]
                for (column, value) in current where base[column] != value {
                    wanted[column] = value
                    pending.insert(column)
                }
                wanted = wanted.filter { current[$0.key] != $0.value }
            } else {
                wanted = [:]  // pushed, answer lost: the push under way holds the same values
            }
            try attempt(change, db) {
                var base = server
                if !wanted.isEmpty {
                    let (names, values, missing) = try rows.databaseValues(entity, wanted, db)
                    let sets = names.map { "\(quoted($0)) = ?" }.joined(separator: ", ")
                    try db.cachedStatement(sql: "UPDATE \(quoted(entity.name)) SET \(sets) WHERE \(quoted(entity.primaryKey)) = ?")
                        .execute(arguments: StatementArguments(values + [object.rowid.databaseValue]))
                    try keepPositions(entity, object.rowid, server: server, written: wanted, pending: pending, db)
                    try recordMissing(missing, of: change, base: &base, db)
                }
                try rows.setBase(uuid, base, db)
            }
        } else if record?.deleted == true {
            return  // deleted here, not pushed yet: the deletion wins
        } else {
            try attempt(change, db) { try insert(change, entity, uuid, server, db) }
        }
    }

    func insert(_ change: SyncChange, _ entity: SyncedTables.Entity, _ uuid: String, _ values: [String: String?], _ db: Database) throws {
        let key = quoted(entity.primaryKey), table = quoted(entity.name)
        let rowid = (try Int64.fetchOne(db.cachedStatement(sql: "SELECT COALESCE(MAX(\(key)), 0) + 1 FROM \(table)")) ?? 1)
        let (names, databaseValues, missing) = try rows.databaseValues(entity, values, db)
        var base = values
        try recordMissing(missing, of: change, base: &base, db)
        try db.cachedStatement(sql: "INSERT INTO stratasync_objects (uuid, tbl, rowid_, base) VALUES (?, ?, ?, ?)")
            .execute(arguments: [uuid, entity.name, rowid, LocalSyncState.encode(base)])
        let columns = ([key] + names.map(quoted)).joined(separator: ", ")
        let marks = Array(repeating: "?", count: names.count + 1).joined(separator: ", ")
        try db.cachedStatement(sql: "INSERT INTO \(table) (\(columns)) VALUES (\(marks))")
            .execute(arguments: StatementArguments([rowid.databaseValue] + databaseValues))
        try keepPositions(entity, rowid, server: values, written: values, pending: [], db)
    }

    /// A pulled object's to-ones whose destinations this store does not hold (refused here
    /// by a rule, or deleted here and not pushed yet) were written as nil: their base is nil
    /// too, so that nil is never taken for a change of this device's and pushed, and the
    /// change is recorded as not applied here, so that the next pull reads the server again
    /// from the start and brings the destination and the reference together.
    func recordMissing(_ missing: [String], of change: SyncChange, base: inout [String: String?], _ db: Database) throws {
        guard !missing.isEmpty else { return }
        for column in missing { base[column] = .some(nil) }
        try SyncConflict.record(
            .notAppliedHere, table: change.table, object: change.id,
            reason: "the destination of \(missing.joined(separator: ", ")) is not in this store", local: nil, server: change.values, db)
    }

    /// Writes the server's position of each ordered to-one of the object `rowid` that the
    /// store's triggers changed while the pull wrote its values (a parent pulled with a
    /// position equal to the one the row had here reads to them as "moved without a
    /// position": they place it last). What the sync writes must be the server's, or it would
    /// differ from the server for good. `written`: the values the pull wrote; `pending`: the
    /// columns changed here and not pushed yet (kept).
    func keepPositions(
        _ entity: SyncedTables.Entity, _ rowid: Int64, server: [String: String?], written: [String: String?], pending: Set<String>,
        _ db: Database
    ) throws {
        for (offset, column) in entity.columns.enumerated() where column.kind == .position && offset > 0 {
            let reference = entity.columns[offset - 1].name
            guard written.keys.contains(reference), !pending.contains(column.name), let wanted = server[column.name] else { continue }
            let value = SyncValue.databaseValue(of: wanted, as: .int)
            try db.cachedStatement(
                sql: "UPDATE \(quoted(entity.name)) SET \(quoted(column.name)) = ? WHERE \(quoted(entity.primaryKey)) = ? AND \(quoted(column.name)) IS NOT ?"
            ).execute(arguments: [value, rowid, value])
        }
    }

    func delete(_ change: SyncChange, _ db: Database) throws {
        guard let entity = tables.entity(named: change.table), let id = change.id else { return }
        let uuid = id.uuidString.lowercased()
        guard let object = try rows.object(uuid, db) else {
            try rows.forget(uuid, db)  // deleted here too
            return
        }
        let current = try rows.values(entity, [object.rowid], db)[object.rowid]
        if let current, let base = object.base, current.contains(where: { base[$0.key] != $0.value }) {
            try SyncConflict.record(
                .deletedOnServer, table: entity.name, object: id,
                reason: "changed here and deleted on the server: the deletion wins", local: current, server: nil, db)
        }
        try attempt(change, db) {
            try db.execute(
                sql: "DELETE FROM \(quoted(entity.name)) WHERE \(quoted(entity.primaryKey)) = ?", arguments: [object.rowid])
            try rows.forget(uuid, db)
        }
    }

    /// A reference changed here and not pushed yet that leads to an object the server
    /// deleted goes back to the server's: the server never had the object there, so a
    /// delete rule here must not take it (or clear its reference) with the deleted one.
    func undoPendingReferences(to deletes: [SyncChange], _ db: Database) throws {
        var doomed: [String: [Int64: String]] = [:]  // entity → local key → sync id
        for change in deletes {
            guard let uuid = change.id?.uuidString.lowercased(), let object = try rows.object(uuid, db) else { continue }
            doomed[change.table, default: [:]][object.rowid] = uuid
        }
        guard !doomed.isEmpty else { return }
        for entity in tables.entities {
            for (column, destination) in entity.references {
                guard let targets = doomed[destination] else { continue }
                let list = targets.keys.map(String.init).joined(separator: ",")
                let found = try Row.fetchAll(db, sql: """
                    SELECT \(quoted(entity.primaryKey)), \(quoted(column)) FROM \(quoted(entity.name)) \
                    WHERE \(quoted(column)) IN (\(list))
                    """)
                for row in found {
                    let rowid: Int64 = row[0], target: Int64 = row[1]
                    guard let uuid = try rows.uuid(entity.name, rowid, db), let (_, base) = try rows.object(uuid, db),
                          let base, let agreed = base[column], agreed != targets[target]
                    else { continue }
                    let restored: DatabaseValue = try agreed.flatMap { try rows.object($0, db)?.rowid.databaseValue } ?? .null
                    // The server's destination is not here either: a required reference
                    // cannot go back, and the delete rule takes the object as before.
                    if restored.isNull && entity.column(named: column)?.isOptional != true { continue }
                    let local = try rows.values(entity, [rowid], db)[rowid]
                    try db.execute(
                        sql: "UPDATE \(quoted(entity.name)) SET \(quoted(column)) = ? WHERE \(quoted(entity.primaryKey)) = ?",
                        arguments: [restored, rowid])
                    try SyncConflict.record(
                        .deletedOnServer, table: entity.name, object: UUID(uuidString: uuid),
                        reason: "\(column) was changed here to an object the server deleted: it goes back to the server's",
                        local: local, server: base, db)
                }
            }
        }
    }

    // MARK: - Links

    func applyLink(_ change: SyncChange, _ db: Database) throws {
        guard let join = tables.join(named: change.table), let a = change.link?[join.column]?.uuidString.lowercased(),
              let b = change.link?[join.inverseColumn]?.uuidString.lowercased()
        else { return }
        let linked = change.kind == .link
        // An object missing here (deleted here and not pushed yet, or refused by a rule here:
        // then the server is read again) leaves the link as it was.
        guard let left = try rows.object(a, db), let right = try rows.object(b, db) else { return }
        let here = try rows.linkExists(join, left.rowid, right.rowid, db)
        let agreed = try rows.isAgreedLink(join, a, b, db)
        if here != agreed {
            // Changed here, not pushed yet: this device's change is pushed next and wins.
            try rows.setAgreedLink(join.name, a, b, linked, db)
            return
        }
        try attempt(change, db) {
            if linked && !here {
                try db.execute(
                    sql: "INSERT INTO \(quoted(join.name)) (\(quoted(join.column)), \(quoted(join.inverseColumn))) VALUES (?, ?)",
                    arguments: [left.rowid, right.rowid])
            } else if !linked && here {
                try db.execute(
                    sql: "DELETE FROM \(quoted(join.name)) WHERE \(quoted(join.column)) = ? AND \(quoted(join.inverseColumn)) = ?",
                    arguments: [left.rowid, right.rowid])
            }
            try rows.setAgreedLink(join.name, a, b, linked, db)
        }
    }

    /// Runs one change in a savepoint; when a rule of this store refuses it, records the
    /// conflict and goes on.
    func attempt(_ change: SyncChange, _ db: Database, _ body: () throws -> Void) throws {
        guard isolatesChanges else { return try body() }
        do {
            try db.inSavepoint {
                try body()
                return .commit
            }
        } catch let error as DatabaseError where error.resultCode != .SQLITE_BUSY && error.resultCode != .SQLITE_IOERR {
            try SyncConflict.record(
                .notAppliedHere, table: change.table, object: change.id, reason: "\(error)", local: nil, server: change.values, db)
        } catch let error as any StrataError {
            try SyncConflict.record(
                .notAppliedHere, table: change.table, object: change.id, reason: "\(error)", local: nil, server: change.values, db)
        }
    }

    /// An error that ``attempt(_:_:_:)`` records as a change not applied here.
    static func isRefusal(_ error: any Error) -> Bool {
        if let error = error as? DatabaseError { return error.resultCode != .SQLITE_BUSY && error.resultCode != .SQLITE_IOERR }
        return error is any StrataError
    }

    // MARK: - Answers to pushes

    /// The server applied `change`: the object's base (or the link's agreed state) moves
    /// to what was pushed.
    func applied(_ change: SyncChange, _ db: Database) throws {
        if let join = tables.join(named: change.table) {
            guard let a = change.link?[join.column], let b = change.link?[join.inverseColumn] else { return }
            try rows.setAgreedLink(join.name, a.uuidString.lowercased(), b.uuidString.lowercased(), change.kind == .link, db)
            return
        }
        guard let uuid = change.id?.uuidString.lowercased() else { return }
        switch change.kind {
        case .insert:
            try rows.setBase(uuid, change.values, db)
        case .update:
            let base = try String.fetchOne(db.cachedStatement(sql: "SELECT base FROM stratasync_objects WHERE uuid = ?"), arguments: [uuid])
            var merged = LocalSyncState.decode(base) ?? [:]
            for (column, value) in change.values { merged[column] = value }
            try rows.setBase(uuid, merged, db)
        case .delete:
            try rows.forget(uuid, db)
        case .link, .unlink:
            break
        }
    }

    /// The server refused a change: record it, and take the server's state of the object.
    func takeServerState(after refusal: SyncRefusal, _ db: Database) throws {
        let change = refusal.change
        if let join = tables.join(named: change.table) {
            try SyncConflict.record(
                .refusedByServer, table: change.table, object: nil, reason: refusal.reason,
                local: change.link.map { $0.mapValues { Optional($0.uuidString.lowercased()) } }, server: nil, db)
            guard let a = change.link?[join.column]?.uuidString.lowercased(), let b = change.link?[join.inverseColumn]?.uuidString.lowercased()
            else { return }
            if let left = try rows.object(a, db), let right = try rows.object(b, db) {
                if change.kind == .link {
                    try db.execute(
                        sql: "DELETE FROM \(quoted(join.name)) WHERE \(quoted(join.column)) = ? AND \(quoted(join.inverseColumn)) = ?",
                        arguments: [left.rowid, right.rowid])
                } else if try !rows.linkExists(join, left.rowid, right.rowid, db) {
                    // An unlink refused (a count rule): the link is the server's, and comes back.
                    try db.execute(
                        sql: "INSERT INTO \(quoted(join.name)) (\(quoted(join.column)), \(quoted(join.inverseColumn))) VALUES (?, ?)",
                        arguments: [left.rowid, right.rowid])
                }
            }
            try rows.setAgreedLink(join.name, a, b, change.kind != .link, db)
            return
        }
        guard let entity = tables.entity(named: change.table), let id = change.id else { return }
        let uuid = id.uuidString.lowercased()
        let object = try rows.object(uuid, db)
        let local = try object.flatMap { try rows.values(entity, [$0.rowid], db)[$0.rowid] } ?? change.values
        try SyncConflict.record(
            .refusedByServer, table: entity.name, object: id, reason: refusal.reason, local: local,
            server: refusal.serverValues, db)
        if let server = refusal.serverValues {
            if let object {
                let (names, values, _) = try rows.databaseValues(entity, server, db)
                let sets = names.map { "\(quoted($0)) = ?" }.joined(separator: ", ")
                try attempt(change, db) {
                    try db.execute(
                        sql: "UPDATE \(quoted(entity.name)) SET \(sets) WHERE \(quoted(entity.primaryKey)) = ?",
                        arguments: StatementArguments(values + [object.rowid.databaseValue]))
                    try rows.setBase(uuid, server, db)
                }
            } else {
                // A deletion refused (a `deny` rule on the server): the object comes back,
                // and so must whatever the server holds that refers to it.
                try rows.forget(uuid, db)
                try attempt(change, db) { try insert(change, entity, uuid, server, db) }
                try LocalSyncState.set("cursor", "0", db)
            }
        } else if let object {
            // Objects moved here into this one, and known to the server elsewhere, stay.
            try undoPendingReferences(to: [SyncChange(kind: .delete, table: entity.name, id: id)], db)
            try attempt(change, db) {
                try db.execute(
                    sql: "DELETE FROM \(quoted(entity.name)) WHERE \(quoted(entity.primaryKey)) = ?", arguments: [object.rowid])
                try rows.forget(uuid, db)
            }
        } else {
            try rows.forget(uuid, db)
        }
    }
}

// MARK: - Objects new to the store


/// A pull's objects that this store does not know at all (an initial sync, inserts made on
/// the server), written in bulk: their sync ids and bases, then their rows, thousands of rows
/// per statement, in the order and with the local keys that ``PullApplier/upsert(_:_:)``
/// would give them one by one, so that the file ends the same.
///
/// What needs no database (the order, each row's SQLite values, its base, which references
/// lead within the batch) is prepared by ``PullApplier/prepare(_:)`` before the store's
/// writer is reached (for the next batch, while this one is written); the writer gives the
/// local keys, looks up the destinations outside the batch and runs the statements.
extension PullApplier {
    /// A batch's objects prepared for the bulk insert, in the order they are applied.
    struct NewObjects: Sendable, Equatable {
        /// A reference of one object's row: where its value goes in ``values``, and its
        /// destination: an object of the batch applied before it (or itself), by position,
        /// or else its sync id, looked up in the store (`target`: empty with a `position`).
        struct Reference: Sendable, Equatable {
            var value: Int
            var position: Int?
            var target: String
        }

        /// Per object: its sync id as text, its entity (an index in `tables.entities`), the
        /// columns the server sent (bits by column offset), its base, and where its values
        /// start in ``values``.
        var uuids: [BulkValue] = []
        var entities: [Int] = []
        var present: [UInt64] = []
        var bases: [BulkValue] = []
        var starts: [Int] = []
        /// Per entity (an index in `tables.entities`), its name: what `stratasync_objects.tbl`
        /// holds.
        var tables: [BulkValue] = []
        /// The present columns' values of every object, one object after the other, in the
        /// entity's column order; a reference's is NULL here, and set by ``references``.
        var values: [BulkValue] = []
        /// Every reference to a destination (not NULL), in order.
        var references: [Reference] = []
        /// The bytes of every text and blob above, one after the other: the writer binds them
        /// where they are (no string or data value per cell to retain and release, and no
        /// copy by SQLite), and a batch's values are one allocation instead of one per cell.
        var bytes: [UInt8] = []
        var count: Int { uuids.count }

        /// `value`, its text or blob appended to ``bytes``.
        mutating func append(_ value: DatabaseValue) -> BulkValue {
            switch value.storage {
            case .null: return .null
            case .int64(let int): return .integer(int)
            case .double(let double): return BulkValue(kind: .real, payload: Int64(bitPattern: double.bitPattern))
            case .string(var string): return string.withUTF8 { append($0, as: .text) }
            case .blob(let data):
                // As GRDB binds data (`sqlite3_bind_blob` of the bytes' address): bytes without an
                // address bind NULL; empty data with one, an empty blob.
                return data.withUnsafeBytes { bytes in
                    bytes.baseAddress == nil ? .null : append(bytes.bindMemory(to: UInt8.self), as: .blob)
                }
            }
        }

        /// The text of `id` (``SyncValue/text(of:)-(UUID)``) appended to ``bytes``.
        mutating func appendText(of id: UUID) -> BulkValue {
            let start = bytes.count
            withUnsafeBytes(of: id.uuid) { id in SyncValue.append(count: 36, to: &bytes) { SyncValue.writeHex(id, dashed: true, into: $0) } }
            return BulkValue(kind: .text, payload: Int64(start), length: 36)
        }

        /// `bytes` appended to ``bytes`` as a text or a blob. A text's length stops at its first
        /// NUL, as GRDB binds a string (through a C string).
        mutating func append(_ bytes: UnsafeBufferPointer<UInt8>, as kind: BulkValue.Kind) -> BulkValue {
            let start = self.bytes.count
            self.bytes.append(contentsOf: bytes)
            var length = bytes.count
            if kind == .text, let base = bytes.baseAddress, let nul = memchr(base, 0, bytes.count) {
                length = UnsafeRawPointer(nul) - UnsafeRawPointer(base)
            }
            return BulkValue(kind: kind, payload: Int64(start), length: length)
        }
    }

    /// A value of ``NewObjects``: a number, or where its text or blob is in
    /// ``NewObjects/bytes``.
    struct BulkValue: Sendable, Equatable {
        enum Kind: UInt8, Sendable { case null, integer, real, text, blob }
        var kind: Kind
        /// The integer, the real's bits, or where the text's or blob's bytes start.
        var payload: Int64
        /// The text's or blob's length in bytes.
        var length: Int = 0

        static let null = BulkValue(kind: .null, payload: 0)
        static func integer(_ value: Int64) -> BulkValue { BulkValue(kind: .integer, payload: value) }
    }

    /// The batch's upserts prepared for the bulk insert (the same for any store: no database
    /// is read), when every one of them can go that way (a known entity of at most 64
    /// columns, each object once); nil otherwise, and then the batch goes change by change.
    /// Whether the store knows none of them is for ``isNew(_:_:)`` to say.
    func prepare(_ changes: [SyncChange]) -> NewObjects? {
        prepare(PullBatch(SyncPullResult(changes: changes, cursor: 0, hasMore: false)))
    }

    /// ``prepare(_:)-([SyncChange])`` of a batch: straight from the server's rows when the
    /// batch holds them (no change, no dictionary per object).
    func prepare(_ batch: PullBatch) -> NewObjects? {
        guard let groups = batch.insertedObjects(tables) else { return nil }
        // Per table of the batch: its entity here, and per column of the entity, where the
        // batch's rows hold it (nil: the server did not send it, and it is left out, as
        // `LocalRows.databaseValues` leaves it out).
        var entityIndex: [String: Int] = [:]
        for (index, entity) in tables.entities.enumerated() { entityIndex[entity.name] = index }
        var groupEntity: [Int] = []
        var groupColumns: [[Int?]] = []
        // Per table of the batch, per column of the entity: whether the batch's rows hold its
        // values decoded as the store keeps a value of the column's type here.
        var groupTyped: [[Bool]] = []
        var total = 0
        for group in groups {
            guard let index = entityIndex[group.table], tables.entities[index].columns.count <= BulkLayout.maxColumns else { return nil }
            var offsets: [String: Int] = [:]
            for (offset, name) in group.columns.enumerated() { offsets[name] = offset }
            groupEntity.append(index)
            groupColumns.append(tables.entities[index].columns.map { offsets[$0.name] })
            groupTyped.append(tables.entities[index].columns.map { column in
                guard !group.values.isEmpty, let offset = offsets[column.name] else { return false }
                return group.types[offset] == column.valueType
            })
            total += group.rowCount
        }
        let layouts = tables.entities.map(BulkLayout.init)
        // Every object of the batch by a number of its own (its table's first number plus its
        // row), and by its sync id; the same object twice: the second would be an update of
        // the first, which the bulk insert does not do.
        var ranges: [Range<Int>] = []  // per table of the batch, its objects' numbers
        var objects: [(group: Int, row: Int, id: UUID)] = []
        objects.reserveCapacity(total)
        var byID: [UUID: Int] = [:]
        byID.reserveCapacity(total)
        for (g, group) in groups.enumerated() {
            let first = objects.count
            for (index, id) in group.ids.enumerated() where group.rows[index] >= 0 {
                guard byID.updateValue(objects.count, forKey: id) == nil else { return nil }
                objects.append((g, group.rows[index], id))
            }
            ranges.append(first..<objects.count)
        }
        guard !objects.isEmpty else { return nil }
        // Where column `offset` (of the entity) of an object is in its table's cells; nil when
        // its row does not hold it (the server has no such column, or a change did not send it).
        func cell(_ object: Int, _ offset: Int) -> Int? {
            let (g, row, _) = objects[object]
            guard let column = groupColumns[g][offset] else { return nil }
            let cell = row * groups[g].columns.count + column
            if groups[g].values.isEmpty, groups[g].texts[cell] == nil { return nil }
            return cell
        }
        // The sync id that reference column `offset` of an object holds.
        func destination(_ object: Int, _ offset: Int) -> UUID? {
            guard let cell = cell(object, offset) else { return nil }
            let group = groups[objects[object].group]
            if !group.values.isEmpty, case .blob(let data) = group.values[cell].storage, data.count == 16 {
                return data.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
            }
            return (group.text(at: cell) ?? nil).flatMap(SyncValue.uuid)
        }
        // The order: entity by entity, each object after those of the batch its references
        // lead to (as `ordered(_:)` orders changes); each reference's destination in the
        // batch resolved once.
        var destinations: [Int?] = []
        let referenceOffsets: [[Int]] = tables.entities.map { entity in
            entity.columns.indices.filter { if case .reference = entity.columns[$0].kind { true } else { false } }
        }
        var destinationStarts: [Int] = []  // per object, where its destinations start in `destinations`
        destinationStarts.reserveCapacity(objects.count + 1)
        destinations.reserveCapacity(objects.count)
        for object in objects.indices {
            destinationStarts.append(destinations.count)
            for offset in referenceOffsets[groupEntity[objects[object].group]] {
                destinations.append(destination(object, offset).flatMap { byID[$0] })
            }
        }
        destinationStarts.append(destinations.count)
        var visited = [Bool](repeating: false, count: objects.count)
        var order: [Int] = []
        order.reserveCapacity(objects.count)
        func visit(_ object: Int) {
            guard !visited[object] else { return }
            visited[object] = true
            for slot in destinationStarts[object]..<destinationStarts[object + 1] {
                if let destination = destinations[slot] { visit(destination) }
            }
            order.append(object)
        }
        for name in tables.dependencyOrder {
            for g in groups.indices where groups[g].table == name {
                for object in ranges[g] { visit(object) }
            }
        }

        var new = NewObjects()
        for layout in layouts {
            var name = layout.entity.name
            let text = name.withUTF8 { new.append($0, as: .text) }
            new.tables.append(text)
        }
        new.uuids.reserveCapacity(objects.count)
        new.entities.reserveCapacity(objects.count)
        new.present.reserveCapacity(objects.count)
        new.bases.reserveCapacity(objects.count)
        new.starts.reserveCapacity(objects.count + 1)
        var positions = [Int?](repeating: nil, count: objects.count)  // per object, its position once placed
        var base: [UInt8] = []
        var texts: [String?] = []
        var cells: [Int?] = []
        for object in order {
            let g = objects[object].group, group = groups[g]
            let index = groupEntity[g]
            let layout = layouts[index]
            positions[object] = new.count
            // The row's values, in the entity's column order, and its base: from the values the
            // server's rows hold (of the column's type here), else from their wire text.
            var present: UInt64 = 0
            cells.removeAll(keepingCapacity: true)
            for offset in layout.columns.indices {
                let cell = cell(object, offset)
                if cell != nil { present |= 1 << UInt64(offset) }
                cells.append(cell)
            }
            let decoded = group.values.isEmpty ? nil : group.values
            texts.removeAll(keepingCapacity: true)
            new.starts.append(new.values.count)
            var slot = destinationStarts[object]
            for (offset, column) in layout.columns.enumerated() {
                let isReference: Bool
                if case .reference = column.kind { isReference = true } else { isReference = false }
                defer { if isReference { slot += 1 } }
                guard let cell = cells[offset] else {
                    texts.append(nil)
                    continue
                }
                let typed = groupTyped[g][offset]
                if isReference {
                    // As `LocalRows.rowid`: an object of this batch applied before this one (or
                    // this one), else one the store knows (by its sync id's text).
                    let position = destinations[slot].flatMap { positions[$0] }
                    let text = typed && position != nil ? nil : group.text(at: cell) ?? nil
                    texts.append(text)
                    if typed ? !decoded![cell].isNull : text != nil {
                        new.references.append(NewObjects.Reference(value: new.values.count, position: position, target: position == nil ? text ?? "" : ""))
                    }
                    new.values.append(.null)
                } else if typed, let decoded {
                    texts.append(nil)
                    let value = new.append(decoded[cell])
                    new.values.append(value)
                } else {
                    let text = group.text(at: cell) ?? nil
                    texts.append(text)
                    let value = new.append(SyncValue.databaseValue(of: text, as: column.valueType))
                    new.values.append(value)
                }
            }
            layout.encodeBase(present, into: &base) { offset, bytes in
                if let cell = cells[offset], let decoded, groupTyped[g][offset] {
                    SyncValue.appendJSON(of: decoded[cell], as: layout.columns[offset].valueType, to: &bytes)
                } else if let text = texts[offset] {
                    LocalSyncState.appendJSONString(text, to: &bytes)
                } else {
                    bytes += SyncValue.jsonNull
                }
            }
            new.uuids.append(new.appendText(of: objects[object].id))
            new.entities.append(index)
            new.present.append(present)
            let encoded = base.withUnsafeBufferPointer { new.append($0, as: .text) }
            new.bases.append(encoded)
        }
        new.starts.append(new.values.count)
        return new
    }

    /// Whether this store has never known any of the objects of `new` (no sync id, no
    /// tombstone): then they go in bulk.
    func isNew(_ new: NewObjects, _ db: Database) throws -> Bool {
        let anyKnown = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM stratasync_objects)") ?? false
        guard anyKnown else { return true }
        return try new.bytes.withUnsafeBytes { bytes in
            let ids = new.uuids
            for start in stride(from: 0, to: ids.count, by: 500) {
                let count = min(500, ids.count - start)
                let marks = Array(repeating: "?", count: count).joined(separator: ",")
                let sql = "SELECT 1 FROM stratasync_objects WHERE uuid IN (\(marks)) LIMIT 1"
                let statement = count == 500 ? try db.cachedStatement(sql: sql) : try db.makeStatement(sql: sql)
                statement.setUncheckedArguments(StatementArguments())
                defer { sqlite3_clear_bindings(statement.sqliteStatement) }  // they point into `bytes`
                var index: CInt = 1
                for id in ids[start..<(start + count)] { try Self.bind(id, bytes.baseAddress, to: statement, at: &index) }
                if try Bool.fetchOne(statement) == true { return false }
            }
            return true
        }
    }

    /// Inserts `new` (from ``prepare(_:)``, known new by ``isNew(_:_:)``): what
    /// ``insert(_:_:_:_:)`` does for each, in the same order, with the same local keys, sync
    /// ids, bases and rows. The statements are bound straight from `new`'s arrays.
    func insertNew(_ new: NewObjects, _ db: Database) throws {
        try new.bytes.withUnsafeBytes { try insertNew(new, bytes: $0.baseAddress, db) }
    }

    /// ``insertNew(_:_:)``, with `new`'s ``NewObjects/bytes`` at `bytes` while the statements
    /// run (their texts and blobs are bound where they are).
    private func insertNew(_ new: NewObjects, bytes: UnsafeRawPointer?, _ db: Database) throws {
        let entities = tables.entities
        var nextKey = [Int64?](repeating: nil, count: entities.count)  // per entity, its next local key
        var keys: [Int64] = []  // per position, the object's local key
        keys.reserveCapacity(new.count)
        var targets: [Int64?] = []  // per reference, its destination's local key
        targets.reserveCapacity(new.references.count)
        var looked: [String: Int64?] = [:]  // sync id → local key, of objects known before
        // Runs of objects of one table with the same columns: their first position.
        var runs: [Int] = []
        var reference = 0  // the next of `new.references`
        for position in 0..<new.count {
            let index = new.entities[position], entity = entities[index]
            let key: Int64
            if let next = nextKey[index] {
                key = next
            } else {
                key = try Int64.fetchOne(
                    db, sql: "SELECT COALESCE(MAX(\(quoted(entity.primaryKey))), 0) + 1 FROM \(quoted(entity.name))") ?? 1
            }
            nextKey[index] = key + 1
            keys.append(key)
            if position == 0 || new.entities[position - 1] != index || new.present[position - 1] != new.present[position] {
                runs.append(position)
            }
            // As `LocalRows.rowid`: an object of this batch applied before this one (or this
            // one), else a live object the store knows.
            while reference < new.references.count, new.references[reference].value < new.starts[position + 1] {
                let destination = new.references[reference]
                reference += 1
                if let position = destination.position {
                    targets.append(keys[position])
                } else if let before = looked[destination.target] {
                    targets.append(before)
                } else {
                    let target = try rows.rowid(destination.target, db)
                    looked[destination.target] = target
                    // A destination this store does not hold: the batch goes change by change,
                    // which records it (see `recordMissing`).
                    guard target != nil else { throw BulkInsertRefused(error: MissingDestination(syncID: destination.target)) }
                    targets.append(target)
                }
            }
        }
        runs.append(new.count)

        // The sync ids and bases first (the identity trigger of each row then finds its id and
        // adds none), then each run of rows of one table with the same columns.
        // `OR FAIL`: the table has no triggers, so that SQLite then keeps no statement journal
        // for these statements (a failure leaves the rows before it, and the whole transaction
        // is rolled back: see `apply`). The sync ids are random: each statement changes pages
        // all over their index, which SQLite otherwise copied into that journal first.
        try insertRows(into: "stratasync_objects", columns: ["uuid", "tbl", "rowid_", "base"], rows: 0..<new.count, orFail: true, db) {
            position, statement, index in
            try Self.bind(new.uuids[position], bytes, to: statement, at: &index)
            try Self.bind(new.tables[new.entities[position]], bytes, to: statement, at: &index)
            try Self.bind(.integer(keys[position]), bytes, to: statement, at: &index)
            try Self.bind(new.bases[position], bytes, to: statement, at: &index)
        }
        reference = 0
        for (first, end) in zip(runs, runs.dropFirst()) {
            let entity = entities[new.entities[first]], present = new.present[first]
            let names = entity.columns.indices.filter { present & (1 << UInt64($0)) != 0 }.map { entity.columns[$0].name }
            try insertRows(into: entity.name, columns: [entity.primaryKey] + names, rows: first..<end, db) { position, statement, index in
                try Self.bind(.integer(keys[position]), bytes, to: statement, at: &index)
                for value in new.starts[position]..<new.starts[position + 1] {
                    if reference < new.references.count, new.references[reference].value == value {
                        try Self.bind(targets[reference].map(BulkValue.integer) ?? .null, bytes, to: statement, at: &index)
                        reference += 1
                    } else {
                        try Self.bind(new.values[value], bytes, to: statement, at: &index)
                    }
                }
            }
        }
    }

    /// How many values one statement of the bulk insert binds on `db`: ``SyncOptions``'s
    /// `bulkStatementValues`, or fewer when the connection allows fewer
    /// (`SQLITE_LIMIT_VARIABLE_NUMBER`).
    func valuesPerStatement(_ db: Database) -> Int {
        max(1, min(options.bulkStatementValues, db.maximumStatementArgumentCount))
    }

    /// `INSERT INTO table (columns) VALUES (…), (…), …` of `rows`, each bound by `bindRow`
    /// (its `columns.count` values, from the parameter index it is given), at most
    /// ``valuesPerStatement(_:)`` values per statement.
    private func insertRows(
        into table: String, columns: [String], rows: Range<Int>, orFail: Bool = false, _ db: Database,
        bindRow: (Int, Statement, inout CInt) throws -> Void
    ) throws {
        let width = columns.count
        guard width > 0, !rows.isEmpty else { return }
        let perStatement = max(1, valuesPerStatement(db) / width)
        let head = "INSERT\(orFail ? " OR FAIL" : "") INTO \(quoted(table)) (\(columns.map(quoted).joined(separator: ", "))) VALUES "
        let row = "(" + Array(repeating: "?", count: width).joined(separator: ", ") + ")"
        func sql(_ rows: Int) -> String { head + Array(repeating: row, count: rows).joined(separator: ", ") }
        let full = rows.count >= perStatement ? sql(perStatement) : ""
        var start = rows.lowerBound
        while start < rows.upperBound {
            let n = min(perStatement, rows.upperBound - start)
            let statement = n == perStatement ? try db.cachedStatement(sql: full) : try db.makeStatement(sql: sql(n))
            // Resets the statement (a cached statement that failed is dropped from GRDB's cache,
            // so this one has not) and clears its bindings; GRDB then runs it as it is bound.
            statement.setUncheckedArguments(StatementArguments())
            // The values are bound where the batch keeps them: no statement keeps them past its run.
            defer { sqlite3_clear_bindings(statement.sqliteStatement) }
            var index: CInt = 1
            for position in start..<(start + n) { try bindRow(position, statement, &index) }
            try statement.execute()
            start += n
        }
    }

    /// Binds `value` (its bytes, if any, at `bytes` + its payload) to parameter `index` of
    /// `statement` as GRDB binds the same value, and moves `index` on. Texts and blobs are
    /// bound where they are: they must stay there until the statement's bindings are cleared.
    static func bind(_ value: BulkValue, _ bytes: UnsafeRawPointer?, to statement: Statement, at index: inout CInt) throws {
        let handle = statement.sqliteStatement
        let code: CInt
        switch value.kind {
        case .null: code = sqlite3_bind_null(handle, index)
        case .integer: code = sqlite3_bind_int64(handle, index, value.payload)
        case .real: code = sqlite3_bind_double(handle, index, Double(bitPattern: UInt64(bitPattern: value.payload)))
        case .text:
            // An empty text is copied from "" (a null pointer would bind NULL).
            if value.length > 0, let bytes {
                code = sqlite3_bind_text(handle, index, bytes.assumingMemoryBound(to: CChar.self) + Int(value.payload), CInt(value.length), nil)
            } else {
                code = sqlite3_bind_text(handle, index, "", 0, transient)
            }
        case .blob:
            // An empty blob, not NULL, as GRDB binds data that has an address.
            if value.length > 0, let bytes {
                code = sqlite3_bind_blob(handle, index, bytes + Int(value.payload), CInt(value.length), nil)
            } else {
                code = sqlite3_bind_zeroblob(handle, index, 0)
            }
        }
        guard code == 0 else { throw DatabaseError(resultCode: ResultCode(rawValue: code), sql: statement.sql) }
        index += 1
    }

    /// SQLite's `SQLITE_TRANSIENT`: it copies the value before the call returns.
    private static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
}

/// An entity's columns as the bulk insert writes them, and its bases: the JSON of
/// ``LocalSyncState/encode(_:)`` (keys sorted), written without sorting them per object.
struct BulkLayout {
    /// At most 64 (``PullApplier/prepare(_:)`` leaves wider entities to the change-by-change way).
    static let maxColumns = 64

    let entity: SyncedTables.Entity
    var columns: [SyncedTables.Column] { entity.columns }
    /// Column offsets, their names sorted as `encode` sorts keys.
    let sorted: [Int]
    /// Per column offset, its JSON key and colon.
    let keys: [[UInt8]]

    init(_ entity: SyncedTables.Entity) {
        self.entity = entity
        sorted = entity.columns.indices.sorted { entity.columns[$0].name < entity.columns[$1].name }
        keys = entity.columns.map { column in
            var bytes = Array(LocalSyncState.encode([column.name: nil]).utf8)  // {"name":null}
            bytes.removeFirst()
            bytes.removeLast(5)  // null}
            return bytes
        }
    }

    /// The base of an object whose columns `present` (bits by offset) hold what `appendValue`
    /// appends for an offset (a JSON string or `null`): the bytes `LocalSyncState.encode`
    /// writes for the same values.
    func encodeBase(_ present: UInt64, into bytes: inout [UInt8], appendValue: (Int, inout [UInt8]) -> Void) {
        bytes.removeAll(keepingCapacity: true)
        bytes.append(UInt8(ascii: "{"))
        var first = true
        for offset in sorted where present & (1 << UInt64(offset)) != 0 {
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            bytes += keys[offset]
            appendValue(offset, &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
    }
}
