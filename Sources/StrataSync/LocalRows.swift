import Foundation
import GRDB
import Strata

/// Reading and writing synced rows of the store file as wire text, keyed by sync ids.
struct LocalRows {
    let tables: SyncedTables

    /// The sync id of a live object.
    func uuid(_ table: String, _ rowid: Int64, _ db: Database) throws -> String? {
        try String.fetchOne(
            db.cachedStatement(sql: "SELECT uuid FROM stratasync_objects WHERE tbl = ? AND rowid_ = ? AND deleted = 0"),
            arguments: [table, rowid])
    }

    /// The local key of a live object, and its base.
    func object(_ uuid: String, _ db: Database) throws -> (rowid: Int64, base: [String: String?]?)? {
        guard let row = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT rowid_, base FROM stratasync_objects WHERE uuid = ? AND deleted = 0"),
            arguments: [uuid])
        else { return nil }
        return (row[0], LocalSyncState.decode(row[1]))
    }

    /// The local key of a live object (its base left unread).
    func rowid(_ uuid: String, _ db: Database) throws -> Int64? {
        try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT rowid_ FROM stratasync_objects WHERE uuid = ? AND deleted = 0"), arguments: [uuid])
    }

    /// The sync id and base of the live object of `table` with local key `rowid`.
    func object(_ table: String, _ rowid: Int64, _ db: Database) throws -> (uuid: String, base: [String: String?]?)? {
        guard let row = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT uuid, base FROM stratasync_objects WHERE tbl = ? AND rowid_ = ? AND deleted = 0"),
            arguments: [table, rowid])
        else { return nil }
        return (row[0], LocalSyncState.decode(row[1]))
    }

    /// Whether the store has a sync id at all (false before an initial sync).
    func hasObjects(_ db: Database) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM stratasync_objects)") ?? false
    }

    /// The sync id of the live object `rowid` of `table` (nil for none, or a tombstone).
    func liveSyncID(_ table: String, _ rowid: Int64, _ db: Database) throws -> UUID? {
        try String.fetchOne(
            db, sql: "SELECT uuid FROM stratasync_objects WHERE tbl = ? AND rowid_ = ? AND deleted = 0", arguments: [table, rowid]
        ).flatMap(UUID.init(uuidString:))
    }

    /// Every live object of `entity`, by sync id, with its values as wire text.
    func liveObjects(_ entity: SyncedTables.Entity, _ db: Database) throws -> [UUID: [String: String?]] {
        let ids = try Row.fetchAll(db, sql: "SELECT rowid_, uuid FROM stratasync_objects WHERE tbl = ? AND deleted = 0", arguments: [entity.name])
        let values = try self.values(entity, ids.map { $0[0] }, db)
        var objects: [UUID: [String: String?]] = [:]
        for id in ids { if let row = values[id[0]], let uuid = UUID(uuidString: id[1]) { objects[uuid] = row } }
        return objects
    }

    /// Every link of `join` between live objects, as "a b" (their sync ids).
    func liveLinks(_ join: SyncedTables.Join, _ db: Database) throws -> Set<String> {
        let pairs = try Row.fetchAll(db, sql: """
            SELECT x.uuid, y.uuid FROM \(quoted(join.name)) j \
            JOIN stratasync_objects x ON x.tbl = ? AND x.rowid_ = j.\(quoted(join.column)) AND x.deleted = 0 \
            JOIN stratasync_objects y ON y.tbl = ? AND y.rowid_ = j.\(quoted(join.inverseColumn)) AND y.deleted = 0
            """, arguments: [join.entity, join.destination])
        return Set(pairs.map { "\($0[0] as String) \($0[1] as String)" })
    }

    /// The local key and base of an object known here, and whether it is a tombstone.
    func record(_ uuid: String, _ db: Database) throws -> (rowid: Int64, base: [String: String?]?, deleted: Bool)? {
        guard let row = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT rowid_, base, deleted FROM stratasync_objects WHERE uuid = ?"), arguments: [uuid])
        else { return nil }
        let deleted: Bool = row[2]
        return (row[0], deleted ? nil : LocalSyncState.decode(row[1]), deleted)
    }

    /// The values of `entity`'s rows `rowids` as wire text, references as sync ids.
    func values(_ entity: SyncedTables.Entity, _ rowids: [Int64], _ db: Database) throws -> [Int64: [String: String?]] {
        var result: [Int64: [String: String?]] = [:]
        let columns = entity.columns
        let list = ([quoted(entity.primaryKey)] + columns.map { quoted($0.name) }).joined(separator: ", ")
        for start in stride(from: 0, to: rowids.count, by: 500) {
            let chunk = rowids[start..<min(start + 500, rowids.count)]
            let rows =
                chunk.count == 1
                ? try Row.fetchCursor(
                    db.cachedStatement(sql: "SELECT \(list) FROM \(quoted(entity.name)) WHERE \(quoted(entity.primaryKey)) = ?"),
                    arguments: [chunk[chunk.startIndex]])
                : try Row.fetchCursor(
                    db, sql: "SELECT \(list) FROM \(quoted(entity.name)) WHERE \(quoted(entity.primaryKey)) IN (\(chunk.map(String.init).joined(separator: ",")))")
            while let row = try rows.next() {
                var values: [String: String?] = [:]
                for (offset, column) in columns.enumerated() {
                    let value: DatabaseValue = row[offset + 1]
                    if case .reference(let destination) = column.kind {
                        if let id = Int64.fromDatabaseValue(value) {
                            values[column.name] = try uuid(destination, id, db)
                        } else {
                            values[column.name] = .some(nil)
                        }
                    } else {
                        values[column.name] = SyncValue.text(of: value, as: column.valueType)
                    }
                }
                result[row[0]] = values
            }
        }
        return result
    }

    /// Wire values → SQLite values for `entity`'s columns named in `values`; references
    /// that lead to no live object here are nil, and listed in `missing`.
    func databaseValues(
        _ entity: SyncedTables.Entity, _ values: [String: String?], _ db: Database
    ) throws -> (columns: [String], values: [DatabaseValue], missing: [String]) {
        var names: [String] = [], result: [DatabaseValue] = [], missing: [String] = []
        for column in entity.columns {
            guard let text = values[column.name] else { continue }
            names.append(column.name)
            if case .reference = column.kind {
                if let text {
                    if let target = try rowid(text, db) {
                        result.append(target.databaseValue)
                    } else {
                        result.append(.null)
                        missing.append(column.name)
                    }
                } else {
                    result.append(.null)
                }
            } else {
                result.append(SyncValue.databaseValue(of: text, as: column.valueType))
            }
        }
        return (names, result, missing)
    }

    /// Whether the local link between two objects (by local keys) exists.
    func linkExists(_ join: SyncedTables.Join, _ a: Int64, _ b: Int64, _ db: Database) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT 1 FROM \(quoted(join.name)) WHERE \(quoted(join.column)) = ? AND \(quoted(join.inverseColumn)) = ?"),
            arguments: [a, b]) ?? false
    }

    func isAgreedLink(_ join: SyncedTables.Join, _ a: String, _ b: String, _ db: Database) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT 1 FROM stratasync_links WHERE tbl = ? AND a = ? AND b = ?"), arguments: [join.name, a, b]) ?? false
    }

    func setAgreedLink(_ table: String, _ a: String, _ b: String, _ linked: Bool, _ db: Database) throws {
        if linked {
            try db.cachedStatement(sql: "INSERT OR IGNORE INTO stratasync_links (tbl, a, b) VALUES (?, ?, ?)").execute(arguments: [table, a, b])
        } else {
            try db.cachedStatement(sql: "DELETE FROM stratasync_links WHERE tbl = ? AND a = ? AND b = ?").execute(arguments: [table, a, b])
        }
    }

    func setBase(_ uuid: String, _ base: [String: String?], _ db: Database) throws {
        try db.cachedStatement(sql: "UPDATE stratasync_objects SET base = ? WHERE uuid = ?")
            .execute(arguments: [LocalSyncState.encode(base), uuid])
    }

    /// Forgets an object entirely (its id, its tombstone, the links the server had with it).
    func forget(_ uuid: String, _ db: Database) throws {
        try db.cachedStatement(sql: "DELETE FROM stratasync_objects WHERE uuid = ?").execute(arguments: [uuid])
        try db.cachedStatement(sql: "DELETE FROM stratasync_links WHERE a = ? OR b = ?").execute(arguments: [uuid, uuid])
    }
}

/// Builds a push from the history and the objects' bases.
struct PushBuilder {
    let tables: SyncedTables
    let options: SyncOptions

    /// The changes to push, in the order the server applies them, and whether they are all
    /// of what changed (false when the batch size cut new objects or deletions short: the
    /// rest goes in the next push, and the history is read again then). Nil: nothing.
    func build(history: HistoryChanges?, _ db: Database) throws -> (changes: [SyncChange], complete: Bool)? {
        let rows = LocalRows(tables: tables)
        let limit = max(1, options.pushBatchSize)

        // New objects, in dependency order; an object whose reference leads to a new object
        // left out of this push waits for the next.
        var newObjects: [(entity: SyncedTables.Entity, rowid: Int64, uuid: String)] = []
        var newCount = 0
        for name in tables.dependencyOrder {
            guard let entity = tables.entity(named: name) else { continue }
            newCount += try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM stratasync_objects WHERE tbl = ? AND deleted = 0 AND base IS NULL", arguments: [name]) ?? 0
            guard newObjects.count < limit else { continue }
            let found = try Row.fetchAll(
                db, sql: "SELECT rowid_, uuid FROM stratasync_objects WHERE tbl = ? AND deleted = 0 AND base IS NULL ORDER BY rowid_ LIMIT ?",
                arguments: [name, limit - newObjects.count])
            newObjects += found.map { (entity, $0[0], $0[1]) }
        }
        let tombstoneCount = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM stratasync_objects WHERE deleted = 1") ?? 0
        let complete = newCount <= newObjects.count && newCount + tombstoneCount <= limit

        var values: [String: [String: String?]] = [:]  // uuid → values
        var entityOf: [String: SyncedTables.Entity] = [:]
        for (name, group) in Dictionary(grouping: newObjects, by: \.entity.name) {
            let entity = group[0].entity
            let read = try rows.values(entity, group.map(\.rowid), db)
            for object in group {
                values[object.uuid] = read[object.rowid]
                entityOf[object.uuid] = entity
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
                            let targetIsNew = try Bool.fetchOne(
                                db.cachedStatement(sql: "SELECT 1 FROM stratasync_objects WHERE uuid = ? AND base IS NULL AND deleted = 0"),
                                arguments: [target]) ?? false
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
                guard state[uuid] == nil, let entity = entityOf[uuid], var own = values[uuid] else { return }
                state[uuid] = 1
                for (column, _) in entity.references {
                    guard let target = own[column] ?? nil, target != uuid, included.contains(target) else { continue }
                    if state[target] == 1 {
                        if entity.column(named: column)?.isOptional == true {
                            deferred.append(SyncChange(kind: .update, table: entity.name, id: UUID(uuidString: uuid), values: [column: target]))
                            own[column] = .some(nil)
                        }
                    } else {
                        visit(target)
                    }
                }
                state[uuid] = 2
                inserts.append(SyncChange(kind: .insert, table: entity.name, id: UUID(uuidString: uuid), values: own))
            }
            for object in newObjects where included.contains(object.uuid) { visit(object.uuid) }
        }

        // Deletions, objects that refer to others first.
        var deletes: [SyncChange] = []
        for name in tables.dependencyOrder.reversed() {
            let found = try String.fetchAll(
                db, sql: "SELECT uuid FROM stratasync_objects WHERE tbl = ? AND deleted = 1 LIMIT ?",
                arguments: [name, max(0, limit - inserts.count - deletes.count)])
            deletes += found.map { SyncChange(kind: .delete, table: name, id: UUID(uuidString: $0)) }
        }
        guard complete else {
            let changes = inserts + deferred + deletes
            return changes.isEmpty ? nil : (changes, false)
        }

        // Updates: the rows the history names (every row after a pruned history), compared
        // with their bases.
        var updates: [SyncChange] = []
        var linkCandidates: [String: Set<[Int64]>] = [:]
        for entity in tables.entities {
            var rowids: [Int64]
            if let history {
                var touched: Set<Int64> = []
                for transaction in history.transactions {
                    let changes = transaction.changes[entity.name]
                    touched.formUnion(changes.updated)
                    touched.formUnion(changes.inserted)
                    if transaction.changes.invalidatedTables.contains(entity.name) {
                        touched.formUnion(try Int64.fetchAll(db, sql: "SELECT rowid_ FROM stratasync_objects WHERE tbl = ? AND deleted = 0", arguments: [entity.name]))
                    }
                }
                rowids = touched.sorted()
            } else {
                rowids = try Int64.fetchAll(db, sql: "SELECT rowid_ FROM stratasync_objects WHERE tbl = ? AND deleted = 0 AND base IS NOT NULL", arguments: [entity.name])
            }
            guard !rowids.isEmpty else { continue }
            let current = try rows.values(entity, rowids, db)
            for rowid in rowids {
                guard let now = current[rowid], let (uuid, base) = try rows.object(entity.name, rowid, db), let base
                else { continue }
                var changed: [String: String?] = [:]
                for (column, value) in now where base[column] != value { changed[column] = value }
                if !changed.isEmpty {
                    updates.append(SyncChange(kind: .update, table: entity.name, id: UUID(uuidString: uuid), values: changed))
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
                let agreed = try Row.fetchAll(db, sql: """
                    SELECT x.rowid_, y.rowid_ FROM stratasync_links l \
                    JOIN stratasync_objects x ON x.uuid = l.a AND x.deleted = 0 \
                    JOIN stratasync_objects y ON y.uuid = l.b AND y.deleted = 0 WHERE l.tbl = ?
                    """, arguments: [join.name])
                for row in agreed { pairs.insert([row[0], row[1]]) }
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
                    link: [join.column: UUID(uuidString: a)!, join.inverseColumn: UUID(uuidString: b)!])
                if here { links.append(change) } else { unlinks.append(change) }
            }
        }
        let changes = inserts + deferred + updates + links + unlinks + deletes
        return changes.isEmpty ? nil : (changes, true)
    }
}
