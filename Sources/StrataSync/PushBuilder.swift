import Foundation
import GRDB
import Strata

/// Builds a push from the objects' sync states, their bases and the history (for links).
struct PushBuilder {
    let tables: SyncedTables
    let options: SyncOptions

    /// A push to send: its changes, whether they are all of what changed, and the local keys
    /// of the objects it inserts or updates, by table (they agree with the server once it is
    /// recorded: see ``agree(_:_:)``).
    struct Built {
        var changes: [SyncChange]
        var complete: Bool
        var inserted: [String: [Int64]] = [:]
        var updated: [String: [Int64]] = [:]
    }

    /// The changes to push, in the order the server applies them, and whether they are all
    /// of what changed (false when the batch size cut new objects or deletions short: the
    /// rest goes in the next push, and the history is read again then). Nil: nothing.
    func build(history: HistoryChanges?, _ db: Database) throws -> Built? {
        let rows = LocalSyncState(tables: tables)
        let limit = max(1, options.pushBatchSize)

        // New objects, in dependency order; an object whose reference leads to a new object
        // left out of this push waits for the next.
        var newObjects: [(entity: SyncedTables.Entity, rowid: Int64, uuid: String)] = []
        var newCount = 0
        for name in tables.dependencyOrder {
            guard let entity = tables.entity(named: name) else { continue }
            newCount += try rows.newObjectCount(name, db)
            guard newObjects.count < limit else { continue }
            newObjects += try rows.newObjects(name, limit: limit - newObjects.count, db).map { (entity, $0.rowid, $0.uuid) }
        }
        let tombstoneCount = try rows.tombstoneCount(db)
        let complete = newCount <= newObjects.count && newCount + tombstoneCount <= limit

        var values: [String: [String: String?]] = [:]  // uuid → values
        var entityOf: [String: SyncedTables.Entity] = [:]
        var rowidOf: [String: Int64] = [:]
        var inserted: [String: [Int64]] = [:]
        for (name, group) in Dictionary(grouping: newObjects, by: \.entity.name) {
            let entity = group[0].entity
            let read = try rows.values(entity, group.map(\.rowid), db)
            for object in group {
                values[object.uuid] = read[object.rowid]
                entityOf[object.uuid] = entity
                rowidOf[object.uuid] = object.rowid
            }
            _ = name
        }
        var inserts: [SyncChange] = []
        var deferred: [SyncChange] = []
        if !newObjects.isEmpty {
            // Leave out, until none is left, objects that refer to a new object not in this push.
            var included = Set(newObjects.map(\.uuid))
            if !complete {
                var changed = true
                while changed {
                    changed = false
                    for object in newObjects where included.contains(object.uuid) {
                        for (column, _) in object.entity.references {
                            guard let target = values[object.uuid]?[column] ?? nil, !included.contains(target) else { continue }
                            let targetIsNew = try rows.record(target, db)?.state == 0
                            if targetIsNew {
                                included.remove(object.uuid)
                                changed = true
                                break
                            }
                        }
                    }
                }
                if included.isEmpty { included = Set(newObjects.map(\.uuid)) }
            }
            // Depth first: each object after the objects it refers to; a reference that closes
            // a cycle is sent as an update after the inserts.
            var state: [String: Int] = [:]
            func visit(_ uuid: String) {
                guard state[uuid] == nil, let entity = entityOf[uuid], var own = values[uuid], let rowid = rowidOf[uuid] else { return }
                state[uuid] = 1
                for (column, _) in entity.references {
                    guard let target = own[column] ?? nil, target != uuid, included.contains(target) else { continue }
                    if state[target] == 1 {
                        if entity.column(named: column)?.isOptional == true {
                            deferred.append(SyncChange(kind: .update, table: entity.name, id: SyncValue.uuid(uuid), values: [column: target]))
                            own[column] = .some(nil)
                        }
                    } else {
                        visit(target)
                    }
                }
                state[uuid] = 2
                inserts.append(SyncChange(kind: .insert, table: entity.name, id: SyncValue.uuid(uuid), values: own))
                inserted[entity.name, default: []].append(rowid)
            }
            for object in newObjects where included.contains(object.uuid) { visit(object.uuid) }
        }

        // Deletions, objects that refer to others first.
        var deletes: [SyncChange] = []
        for name in tables.dependencyOrder.reversed() {
            let found = try rows.tombstones(name, limit: max(0, limit - inserts.count - deletes.count), db)
            deletes += found.map { SyncChange(kind: .delete, table: name, id: SyncValue.uuid($0)) }
        }
        guard complete else {
            let changes = inserts + deferred + deletes
            return changes.isEmpty ? nil : Built(changes: changes, complete: false, inserted: inserted)
        }

        // Updates: the agreed objects with columns changed here (their bases), each column
        // whose value differs from the agreed one. A column changed back goes from the bases.
        var updates: [SyncChange] = []
        var updated: [String: [Int64]] = [:]
        var linkCandidates: [String: Set<[Int64]>] = [:]
        for entity in tables.entities {
            let objects = try rows.changedObjects(entity, db)
            guard !objects.isEmpty else { continue }
            let wanted = Set(objects.lazy.flatMap(\.changed.keys))
            let current = try rows.values(entity, objects.map(\.rowid), only: wanted, db)
            for object in objects {
                guard let now = current[object.rowid], let uuid = object.uuid, object.isAgreed else { continue }
                var changed: [String: String?] = [:]
                for (column, value) in object.changed {
                    if let here = now[column], here != value {
                        changed[column] = here
                    } else {
                        try rows.dropBase(entity.name, object.rowid, column, db)
                    }
                }
                if !changed.isEmpty {
                    updates.append(SyncChange(kind: .update, table: entity.name, id: uuid, values: changed))
                    updated[entity.name, default: []].append(object.rowid)
                }
            }
        }

        // Links: the pairs the history names (every pair after a pruned history, and on the
        // first push), each pushed when its state here differs from the server's.
        let seed = try LocalSyncState.value("seedLinks", db) != nil
        for join in tables.joins {
            var pairs: Set<[Int64]> = linkCandidates[join.name] ?? []
            if let history, !seed {
                for transaction in history.transactions {
                    for (_, row) in transaction.changes[join.name].joinRows {
                        if let a = row[join.column], let b = row[join.inverseColumn] { pairs.insert([a, b]) }
                    }
                }
            } else {
                let all = try Row.fetchAll(db, sql: "SELECT \(quoted(join.column)), \(quoted(join.inverseColumn)) FROM \(quoted(join.name))")
                for row in all { pairs.insert([row[0], row[1]]) }
                for pair in try rows.agreedLinkPairs(join, db) { pairs.insert(pair) }
            }
            linkCandidates[join.name] = pairs
        }
        var links: [SyncChange] = []
        var unlinks: [SyncChange] = []
        for join in tables.joins {
            for pair in (linkCandidates[join.name] ?? []).sorted(by: { $0.lexicographicallyPrecedes($1) }) {
                // A link of an object that is gone goes with the object.
                guard let a = try rows.uuid(join.entity, pair[0], db), let b = try rows.uuid(join.destination, pair[1], db) else { continue }
                let here = try rows.linkExists(join, pair[0], pair[1], db)
                guard here != (try rows.isAgreedLink(join, a, b, db)) else { continue }
                let change = SyncChange(
                    kind: here ? .link : .unlink, table: join.name,
                    link: [join.column: SyncValue.uuid(a)!, join.inverseColumn: SyncValue.uuid(b)!])
                if here { links.append(change) } else { unlinks.append(change) }
            }
        }
        let changes = inserts + deferred + updates + links + unlinks + deletes
        return changes.isEmpty ? nil : Built(changes: changes, complete: true, inserted: inserted, updated: updated)
    }

    /// Records that the server agrees with the push `built` (it is in the outbox, applied
    /// there once whenever it arrives): the objects it inserts are agreed, and those it
    /// updates hold the values pushed, so they keep no base (a column changed back was
    /// dropped while building). Links agree through `applier`; deletions' tombstones stay
    /// until the server's answer.
    func agree(_ built: Built, _ applier: PullApplier, _ db: Database) throws {
        let rows = LocalSyncState(tables: tables)
        for (table, rowids) in built.inserted { try rows.markAgreed(table, rowids, db) }
        for (table, rowids) in built.updated { try rows.dropBases(table, rowids, db) }
        for change in built.changes where change.kind == .link || change.kind == .unlink { try applier.applied(change, db) }
    }
}
