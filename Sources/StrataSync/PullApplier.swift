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
    /// Whether the store's count rules are checked after each batch (a refusal then goes
    /// change by change). Not for the batches of a snapshot: an owner and its links come in
    /// different batches, so the pull checks the counts once, after its last batch.
    var checksCounts = true
    var rows: LocalSyncState { LocalSyncState(tables: tables) }

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
    /// changes is made only when the batch does not go in bulk. The batch goes by the first
    /// of the ``PullStrategy`` types that takes it: ``BulkInsertStrategy`` (a batch of objects
    /// this store does not know), else ``AllAtOnceStrategy``, which hands over to
    /// ``ChangeByChangeStrategy`` when a rule of this store refuses a change.
    @discardableResult
    func apply(_ batch: PullBatch, prepared: NewObjects?, assumingNew: Bool = false, _ db: Database) throws -> Bool {
        let before = try LocalSyncState.lastConflict(db)
        try withSyncDeletes(db) {
            let bulk = BulkInsertStrategy(newObjects: prepared, assumingNew: assumingNew)
            if try !bulk.apply(batch, self, db) { _ = try AllAtOnceStrategy().apply(batch, self, db) }
            return []
        }
        return try LocalSyncState.conflictCount(after: before, kind: .notAppliedHere, db) > 0
    }

    /// Applies `changes` each in a savepoint of its own; then, while a count rule of this
    /// store is broken (checked at commit, so no savepoint of one change can catch it: the
    /// server does not know every rule, or was written by a service that bypassed it), sets
    /// aside the pulled changes that touch the owners out of range and applies the others
    /// again. Those set aside are recorded (``SyncConflict/Kind/notAppliedHere``), so the
    /// server is read again from the start at the next pull, and the rest is applied.
    func applyKeepingCounts(_ changes: [SyncChange], _ db: Database) throws {
        var setAside: [Int: String] = [:]  // index → why
        while true {
            var broken: [RuleViolationError] = []
            var touched: [(violation: RuleViolationError, changes: [Int])] = []
            try db.inSavepoint {
                try applyChanges(changes.indices.filter { setAside[$0] == nil }.map { changes[$0] }, db)
                broken = checksCounts ? try store.brokenCountRules(db) : []
                // Which changes touch each owner out of range, read before the rollback: the
                // owner may be an object this pull inserts.
                touched = try broken.map { ($0, try touching($0, changes, db)) }
                return broken.isEmpty ? .commit : .rollback
            }
            guard let first = broken.first else { break }
            var more = false
            for (violation, indices) in touched {
                for index in indices where setAside[index] == nil {
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
            let values = change.link.map { $0.mapValues { Optional($0.syncText) } } ?? change.values
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
            let linked = try rows.liveSyncIDs(relationship.destination, Int64.fetchAll(
                db, sql: "SELECT \(quoted(inverseColumn)) FROM \(quoted(name)) WHERE \(quoted(column)) = ?", arguments: [id]), db)
            for (index, change) in changes.enumerated() {
                if change.table == name, change.link?[column]?.syncText == owner {
                    result.append(index)
                } else if change.kind == .delete, change.table == relationship.destination,
                          let other = change.id?.syncText, linked.contains(other)
                {
                    result.append(index)
                }
            }
        case .inverseForeignKey:
            guard case .foreignKey(let column)? = tables.schema.entity(named: relationship.destination)?
                .relationship(named: relationship.inverse)?.storage,
                  let destination = tables.entity(named: relationship.destination)
            else { return [] }
            let here = try rows.liveSyncIDs(destination.name, Int64.fetchAll(
                db, sql: "SELECT \(quoted(destination.primaryKey)) FROM \(quoted(destination.name)) WHERE \(quoted(column)) = ?",
                arguments: [id]), db)
            for (index, change) in changes.enumerated() where change.table == destination.name {
                guard let other = change.id?.syncText else { continue }
                let comes = (change.values[column] ?? nil)?.lowercased() == owner
                if here.contains(other) || (change.kind == .insert && comes) { result.append(index) }
            }
        case .foreignKey:
            break
        }
        for (index, change) in changes.enumerated() where change.table == violation.entity && change.id?.syncText == owner {
            result.append(index)
        }
        return result
    }

    /// Applies `changes`: objects, then links, then deletions. `newObjects`: the batch's
    /// upserts from ``prepare(_:)``, inserted in bulk.
    func applyChanges(_ changes: [SyncChange], newObjects: NewObjects? = nil, _ db: Database) throws {
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
        let tombstones = Set(try rows.tombstones(db).map(\.uuid))
        let unpushed = try rows.newObjects(db)
        var unpushedValues: [String: (table: String, values: [String: String?]?)] = [:]
        for (table, group) in Dictionary(grouping: unpushed, by: \.table) {
            guard let entity = tables.entity(named: table) else { continue }
            let values = try rows.values(entity, group.map(\.rowid), db)
            for object in group { unpushedValues[object.uuid] = (table, values[object.rowid]) }
        }
        // What the body writes is the server's state (no base recorded for it).
        let recorded = try LocalSyncState.applyingServerState(db, body)
        var readAgain = false
        for (uuid, table) in try rows.tombstones(db) {
            guard !tombstones.contains(uuid) else { continue }
            try rows.forget(uuid, db)
            // Deleted here by a delete rule, with an object the server deleted or refused,
            // though the server holds this one (it was pushed, and the server did not delete it
            // in what this device has read): it must not be lost here. The tombstone goes (it
            // is not a deletion to push), and the server is read again, which brings the object
            // back where the server has it.
            guard !recorded.contains(uuid) else {
                options.logger.trace("deleted here with the server: \(table) \(uuid)")
                continue
            }
            options.logger.debug("deleted here by a delete rule, kept by the server: \(table) \(uuid)")
            try SyncConflict.record(
                .notAppliedHere, table: table, object: SyncValue.uuid(uuid),
                reason: "deleted here by a delete rule with an object the server deleted or refused, while the server holds it elsewhere: read again from the server",
                local: nil, server: nil, db)
            readAgain = true
        }
        if readAgain { try LocalSyncState.set("rescan", "1", db) }
        if !unpushedValues.isEmpty {
            let live = try rows.liveAmong(Array(unpushedValues.keys), db)
            for (uuid, object) in unpushedValues where !live.contains(uuid) && !recorded.contains(uuid) {
                try SyncConflict.record(
                    .deletedOnServer, table: object.table, object: SyncValue.uuid(uuid),
                    reason: "created here and not pushed yet, then deleted here by a delete rule when the server deleted an object it belonged to",
                    local: object.values, server: nil, db)
            }
        }
    }
}
