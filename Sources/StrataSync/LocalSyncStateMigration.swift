import Foundation
import GRDB
import Strata

/// Migrates the sync's state of a store file from its first format to the second (see
/// ``LocalSyncState``), in place, in the transaction that prepares the sync:
///
/// - `stratasync_objects` (a 36-character text id and a whole JSON base per object) becomes
///   `stratasync_ids` (16-byte ids, a state) and `stratasync_base` (the agreed value of each
///   column that differs here from it: what the first format found by comparing the row
///   with its base);
/// - `stratasync_links` keeps its pairs, as 16-byte ids;
/// - the first format's triggers go (``LocalSyncState/prepare(_:_:)`` makes this version's).
///
/// Nothing is sent or lost: a change made here and not pushed before the migration is pushed
/// after it, and the server sees the same device. A file migrated cannot be synced by an
/// earlier version of Strata again.
enum LocalSyncStateMigration {
    static func fromFirstFormat(_ tables: SyncedTables, _ db: Database) throws {
        struct Object {
            var uuid: Data
            var table: String
            var rowid: Int64
            var base: String?
            var deleted: Bool
        }
        var objects: [Object] = []
        let cursor = try Row.fetchCursor(db, sql: "SELECT uuid, tbl, rowid_, base, deleted FROM stratasync_objects")
        while let row = try cursor.next() {
            guard let uuid = LocalSyncState.blob(row[0] as String) else { continue }
            objects.append(Object(uuid: uuid, table: row[1], rowid: row[2], base: row[3], deleted: row[4]))
        }
        var links: [(table: String, a: Data, b: Data)] = []
        if try db.tableExists("stratasync_links") {
            for row in try Row.fetchAll(db, sql: "SELECT tbl, a, b FROM stratasync_links") {
                guard let a = LocalSyncState.blob(row[1] as String), let b = LocalSyncState.blob(row[2] as String) else { continue }
                links.append((row[0], a, b))
            }
        }
        for name in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'stratasync\\_%' ESCAPE '\\'") {
            try db.execute(sql: "DROP TRIGGER \(quoted(name))")
        }
        try db.execute(sql: "DROP TABLE stratasync_objects")
        try db.execute(sql: "DROP TABLE IF EXISTS stratasync_links")
        for statement in LocalSyncState.createSQL { try db.execute(sql: statement) }

        let insertID = try db.makeStatement(sql: "INSERT OR IGNORE INTO stratasync_ids (uuid, tbl, rowid_, state) VALUES (?, ?, ?, ?)")
        for object in objects {
            let state = object.deleted ? 2 : object.base == nil ? 0 : 1
            try insertID.execute(arguments: [object.uuid, object.table, object.rowid, state])
        }
        let insertLink = try db.makeStatement(sql: "INSERT OR IGNORE INTO stratasync_links (tbl, a, b) VALUES (?, ?, ?)")
        for link in links { try insertLink.execute(arguments: [link.table, link.a, link.b]) }

        // The bases: what differs here from the agreed values (a column the base lacks, one the
        // store gained since, is taken as changed here, as the first format took it).
        let rows = LocalRows(tables: tables)
        let agreed = objects.filter { !$0.deleted && $0.base != nil }
        for (table, group) in Dictionary(grouping: agreed, by: \.table) {
            guard let entity = tables.entity(named: table) else { continue }
            let current = try rows.values(entity, group.map(\.rowid), db)
            for object in group {
                guard let now = current[object.rowid], let base = LocalSyncState.decode(object.base) else { continue }
                var sparse: [String: String?] = [:]
                for column in entity.columns where base[column.name] != now[column.name] {
                    sparse[column.name] = base[column.name] ?? .some(nil)
                }
                try rows.writeBase(entity, object.rowid, sparse, db)
            }
        }
    }
}
