import Foundation
import GRDB
import Strata

/// Migrates the sync's state of a store file from an earlier format to this version's (see
/// ``LocalSyncState``), in place, in the transaction that prepares the sync.
///
/// From the first format:
/// - `stratasync_objects` (a 36-character text id and a whole JSON base per object) becomes
///   `stratasync_ids` and `stratasync_tombstones` (16-byte ids) and `stratasync_base` (the
///   agreed value of each column that differs here from it: what the first format found by
///   comparing the row with its base);
/// - `stratasync_links` keeps its pairs, as 16-byte ids.
///
/// From the second format:
/// - `stratasync_ids` (keyed by id, indexed by table name and local key, tombstones among
///   the objects) becomes the tables' numbers, `stratasync_ids` keyed by packed local key,
///   and `stratasync_tombstones`; the bases and links are kept as they are.
///
/// The earlier format's triggers go (``LocalSyncState/prepare(_:_:)`` makes this version's).
/// Nothing is sent or lost: a change made here and not pushed before the migration is pushed
/// after it, and the server sees the same device. A file migrated cannot be synced by an
/// earlier version of Strata again.
extension LocalSyncState {
    /// An object as an earlier format kept it: its 16-byte id, table, local key, and state
    /// (0 new here, 1 agreed, 2 a tombstone).
    struct MigratedObject {
        var uuid: Data
        var table: String
        var rowid: Int64
        var state: Int
    }

    static func migrateFromSecondFormat(_ tables: SyncedTables, _ db: Database) throws {
        let objects = try Row.fetchAll(db, sql: "SELECT uuid, tbl, rowid_, state FROM stratasync_ids").map {
            MigratedObject(uuid: $0[0], table: $0[1], rowid: $0[2], state: $0[3])
        }
        try dropTriggers(db)
        try db.execute(sql: "DROP TABLE stratasync_ids")
        for statement in LocalSyncState.createSQL { try db.execute(sql: statement) }
        try writeMigrated(objects, tables, db)
    }

    /// Writes `objects` in this version's tables (numbering their tables).
    static func writeMigrated(_ objects: [MigratedObject], _ tables: SyncedTables, _ db: Database) throws {
        // A table the model no longer syncs keeps its objects' state (as the earlier format
        // did): it is numbered too.
        let numbers = try numberTables(named: tables.entities.map(\.name) + Set(objects.map(\.table)).sorted(), db)
        let live = try db.makeStatement(sql: "INSERT OR IGNORE INTO stratasync_ids (k, uuid, state) VALUES (?, ?, ?)")
        let tombstone = try db.makeStatement(sql: "INSERT OR IGNORE INTO stratasync_tombstones (uuid, tbl, rowid_) VALUES (?, ?, ?)")
        for object in objects {
            if object.state == 2 {
                try tombstone.execute(arguments: [object.uuid, object.table, object.rowid])
            } else {
                let number = numbers[object.table] ?? 0
                try live.execute(arguments: [LocalSyncState.packedKey(object.rowid, number), object.uuid, object.state])
            }
        }
    }

    static func dropTriggers(_ db: Database) throws {
        for name in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'stratasync\\_%' ESCAPE '\\'") {
            try db.execute(sql: "DROP TRIGGER \(quoted(name))")
        }
    }

    static func migrateFromFirstFormat(_ tables: SyncedTables, _ db: Database) throws {
        struct FirstObject {
            var uuid: Data
            var table: String
            var rowid: Int64
            var base: String?
            var deleted: Bool
        }
        var objects: [FirstObject] = []
        let cursor = try Row.fetchCursor(db, sql: "SELECT uuid, tbl, rowid_, base, deleted FROM stratasync_objects")
        while let row = try cursor.next() {
            guard let uuid = LocalSyncState.blob(row[0] as String) else { continue }
            objects.append(FirstObject(uuid: uuid, table: row[1], rowid: row[2], base: row[3], deleted: row[4]))
        }
        var links: [(table: String, a: Data, b: Data)] = []
        if try db.tableExists("stratasync_links") {
            for row in try Row.fetchAll(db, sql: "SELECT tbl, a, b FROM stratasync_links") {
                guard let a = LocalSyncState.blob(row[1] as String), let b = LocalSyncState.blob(row[2] as String) else { continue }
                links.append((row[0], a, b))
            }
        }
        try dropTriggers(db)
        try db.execute(sql: "DROP TABLE stratasync_objects")
        try db.execute(sql: "DROP TABLE IF EXISTS stratasync_links")
        for statement in LocalSyncState.createSQL { try db.execute(sql: statement) }

        try writeMigrated(
            objects.map { MigratedObject(uuid: $0.uuid, table: $0.table, rowid: $0.rowid, state: $0.deleted ? 2 : $0.base == nil ? 0 : 1) },
            tables, db)
        let insertLink = try db.makeStatement(sql: "INSERT OR IGNORE INTO stratasync_links (tbl, a, b) VALUES (?, ?, ?)")
        for link in links { try insertLink.execute(arguments: [link.table, link.a, link.b]) }

        // The bases: what differs here from the agreed values (a column the base lacks, one the
        // store gained since, is taken as changed here, as the first format took it).
        let rows = LocalSyncState(tables: tables)
        let agreed = objects.filter { !$0.deleted && $0.base != nil }
        for (table, group) in Dictionary(grouping: agreed, by: \.table) {
            guard let entity = tables.entity(named: table) else { continue }
            let current = try rows.values(entity, group.map(\.rowid), db)
            for object in group {
                guard let now = current[object.rowid], let base = SyncJSON.decode(object.base) else { continue }
                var sparse: [String: String?] = [:]
                for column in entity.columns where base[column.name] != now[column.name] {
                    sparse[column.name] = base[column.name] ?? .some(nil)
                }
                try rows.writeBase(entity, object.rowid, sparse, db)
            }
        }
    }
}
