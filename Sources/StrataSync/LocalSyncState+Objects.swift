import Foundation
import GRDB
import Strata

/// The sync's objects in the store file: reading and writing synced rows as wire text, keyed
/// by sync ids (as text: the file keeps their 16 bytes), their states, bases and links.
extension LocalSyncState {
    /// SQL of the packed key of the object whose table is named by the first parameter and
    /// whose local key is the second.
    static let key = LocalSyncState.packedKeySQL("?2", LocalSyncState.numberSQL("?1"))
    /// SQL of the condition on `stratasync_ids` (aliased `i`) that finds the sync id bound
    /// as the first parameter.
    static let byID = LocalSyncState.uuidMatchSQL("i", "?1")

    /// What the file knows of an object: its local key, and whether the server has agreed on
    /// it, or it is a tombstone.
    struct Record {
        var rowid: Int64
        /// 0 new here, 1 agreed with the server, 2 a tombstone.
        var state: Int
        var isAgreed: Bool { state == 1 }
        var isDeleted: Bool { state == 2 }
    }

    /// The sync id of a live object.
    func uuid(_ table: String, _ rowid: Int64, _ db: Database) throws -> String? {
        try Data.fetchOne(
            db.cachedStatement(sql: "SELECT uuid FROM stratasync_ids WHERE k = \(Self.key)"), arguments: [table, rowid]
        ).map(LocalSyncState.text)
    }

    /// The local key of a live object, and whether the server agreed on it (false: new here).
    func object(_ uuid: String, _ db: Database) throws -> (rowid: Int64, isAgreed: Bool)? {
        guard let record = try record(uuid, db), !record.isDeleted else { return nil }
        return (record.rowid, record.isAgreed)
    }

    /// The local key of a live object.
    func rowid(_ uuid: String, _ db: Database) throws -> Int64? {
        guard let blob = LocalSyncState.blob(uuid) else { return nil }
        return try Int64.fetchOne(db.cachedStatement(sql: "SELECT \(LocalSyncState.localKeySQL("i.k")) FROM stratasync_ids i WHERE \(Self.byID)"), arguments: [blob])
    }

    /// The sync id of the live object of `table` with local key `rowid`, and whether the
    /// server agreed on it.
    func object(_ table: String, _ rowid: Int64, _ db: Database) throws -> (uuid: String, isAgreed: Bool)? {
        guard let row = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT uuid, state FROM stratasync_ids WHERE k = \(Self.key)"),
            arguments: [table, rowid])
        else { return nil }
        return (LocalSyncState.text(row[0]), (row[1] as Int) == 1)
    }

    /// Whether the store has a sync id at all (false before an initial sync).
    func hasObjects(_ db: Database) throws -> Bool {
        try Bool.fetchOne(
            db, sql: "SELECT EXISTS (SELECT 1 FROM stratasync_ids) OR EXISTS (SELECT 1 FROM stratasync_tombstones)") ?? false
    }

    /// The sync id of the live object `rowid` of `table` (nil for none, or a tombstone).
    func liveSyncID(_ table: String, _ rowid: Int64, _ db: Database) throws -> UUID? {
        try Data.fetchOne(
            db.cachedStatement(sql: "SELECT uuid FROM stratasync_ids WHERE k = \(Self.key)"), arguments: [table, rowid]
        ).flatMap(LocalSyncState.uuid)
    }

    /// Every live object of `entity`, by sync id, with its values as wire text.
    func liveObjects(_ entity: SyncedTables.Entity, _ db: Database) throws -> [UUID: [String: String?]] {
        let ids = try Row.fetchAll(
            db, sql: "SELECT \(LocalSyncState.localKeySQL("k")), uuid FROM stratasync_ids WHERE \(LocalSyncState.tableNumberSQL("k")) = \(LocalSyncState.numberSQL("?"))", arguments: [entity.name])
        let values = try self.values(entity, ids.map { $0[0] }, db)
        var objects: [UUID: [String: String?]] = [:]
        for id in ids { if let row = values[id[0]], let uuid = LocalSyncState.uuid(id[1]) { objects[uuid] = row } }
        return objects
    }

    /// Every link of `join` between live objects, as "a b" (their sync ids).
    func liveLinks(_ join: SyncedTables.Join, _ db: Database) throws -> Set<String> {
        let pairs = try Row.fetchAll(db, sql: """
            SELECT x.uuid, y.uuid FROM \(quoted(join.name)) j \
            JOIN stratasync_ids x ON x.k = \(LocalSyncState.packedKeySQL("j.\(quoted(join.column))", LocalSyncState.numberSQL("?1"))) \
            JOIN stratasync_ids y ON y.k = \(LocalSyncState.packedKeySQL("j.\(quoted(join.inverseColumn))", LocalSyncState.numberSQL("?2")))
            """, arguments: [join.entity, join.destination])
        return Set(pairs.map { "\(LocalSyncState.text($0[0])) \(LocalSyncState.text($0[1]))" })
    }

    /// What the file knows of an object: live or a tombstone.
    func record(_ uuid: String, _ db: Database) throws -> Record? {
        guard let blob = LocalSyncState.blob(uuid) else { return nil }
        if let row = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT \(LocalSyncState.localKeySQL("i.k")), i.state FROM stratasync_ids i WHERE \(Self.byID)"), arguments: [blob])
        {
            return Record(rowid: row[0], state: row[1])
        }
        return try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT rowid_ FROM stratasync_tombstones WHERE uuid = ?"), arguments: [blob]
        ).map { Record(rowid: $0, state: 2) }
    }

    // MARK: - Objects by state

    /// How many objects of `table` are new here (not acknowledged by the server).
    func newObjectCount(_ table: String, _ db: Database) throws -> Int {
        try Int.fetchOne(
            db, sql: "SELECT COUNT(*) FROM stratasync_ids WHERE state = 0 AND \(LocalSyncState.tableNumberSQL("k")) = \(LocalSyncState.numberSQL("?"))", arguments: [table]
        ) ?? 0
    }

    /// The first `limit` objects of `table` new here, by local key.
    func newObjects(_ table: String, limit: Int, _ db: Database) throws -> [(rowid: Int64, uuid: String)] {
        try Row.fetchAll(
            db, sql: """
                SELECT \(LocalSyncState.localKeySQL("k")), uuid FROM stratasync_ids WHERE state = 0 AND \(LocalSyncState.tableNumberSQL("k")) = \(LocalSyncState.numberSQL("?1")) ORDER BY k LIMIT ?2
                """, arguments: [table, limit]
        ).map { ($0[0], LocalSyncState.text($0[1])) }
    }

    /// Every object new here: its sync id, table and local key.
    func newObjects(_ db: Database) throws -> [(uuid: String, table: String, rowid: Int64)] {
        try Row.fetchAll(
            db, sql: "SELECT i.uuid, t.tbl, \(LocalSyncState.localKeySQL("i.k")) FROM stratasync_ids i JOIN stratasync_tables t ON t.n = \(LocalSyncState.tableNumberSQL("i.k")) WHERE i.state = 0"
        ).map {
            (LocalSyncState.text($0[0]), $0[1], $0[2])
        }
    }

    /// How many tombstones the file keeps.
    func tombstoneCount(_ db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM stratasync_tombstones") ?? 0
    }

    /// Every tombstone: its sync id and table.
    func tombstones(_ db: Database) throws -> [(uuid: String, table: String)] {
        try Row.fetchAll(db, sql: "SELECT uuid, tbl FROM stratasync_tombstones").map { (LocalSyncState.text($0[0]), $0[1]) }
    }

    /// The sync ids of the first `limit` tombstones of `table`.
    func tombstones(_ table: String, limit: Int, _ db: Database) throws -> [String] {
        try Data.fetchAll(db, sql: "SELECT uuid FROM stratasync_tombstones WHERE tbl = ? LIMIT ?", arguments: [table, limit])
            .map(LocalSyncState.text)
    }

    /// Which of `uuids` are live objects here.
    func liveAmong(_ uuids: [String], _ db: Database) throws -> Set<String> {
        var live: Set<String> = []
        let blobs = uuids.compactMap(LocalSyncState.blob)
        for start in stride(from: 0, to: blobs.count, by: 500) {
            let chunk = Array(blobs[start..<min(start + 500, blobs.count)])
            live.formUnion(try Data.fetchAll(db, sql: Self.anyOfSQL(chunk.count, "uuid"), arguments: StatementArguments(chunk))
                .map(LocalSyncState.text))
        }
        return live
    }

    /// The sync ids of the live objects of `table` with local keys `rowids`.
    func liveSyncIDs(_ table: String, _ rowids: [Int64], _ db: Database) throws -> Set<String> {
        var result: Set<String> = []
        for rowid in rowids { if let uuid = try uuid(table, rowid, db) { result.insert(uuid) } }
        return result
    }

    /// Records the sync id of an object a pull inserts, agreed with the server.
    func insertAgreed(_ uuid: String, _ table: String, _ rowid: Int64, _ db: Database) throws {
        try db.cachedStatement(sql: "INSERT INTO stratasync_ids (k, uuid, state) VALUES (\(Self.key), ?3, 1)")
            .execute(arguments: [table, rowid, LocalSyncState.blob(uuid)])
    }

    /// What the bulk insert writes its sync ids into: the table, its columns (the packed
    /// key, see ``LocalSyncState/packedKey(_:_:)``, and the id), and the state of the objects
    /// it writes (agreed).
    static let bulkIDs = (table: "stratasync_ids", columns: ["k", "uuid", "state"], state: Int64(1))

    /// A statement that selects `result` of the live objects among `count` sync ids (16 bytes
    /// each, bound in order as `?1`…), through the index on their first bytes.
    static func anyOfSQL(_ count: Int, _ result: String) -> String {
        let marks = (1...max(count, 1)).map { "?\($0)" }
        return """
            SELECT \(result) FROM stratasync_ids WHERE substr(uuid, 1, 4) IN (\(marks.map { "substr(\($0), 1, 4)" }.joined(separator: ","))) \
            AND uuid IN (\(marks.joined(separator: ",")))
            """
    }

    /// A statement that tells whether any of `count` sync ids (16 bytes each, bound in order)
    /// is known here, live or a tombstone.
    static func anyKnownSQL(_ count: Int) -> String {
        let marks = (1...max(count, 1)).map { "?\($0)" }.joined(separator: ",")
        return """
            SELECT 1 WHERE EXISTS (\(anyOfSQL(count, "1"))) OR EXISTS (SELECT 1 FROM stratasync_tombstones WHERE uuid IN (\(marks)))
            """
    }

    // MARK: - Bases

    /// Drops the base of one column of object `rowid` of `table` (it holds the agreed value).
    func dropBase(_ table: String, _ rowid: Int64, _ column: String, _ db: Database) throws {
        try db.cachedStatement(sql: "DELETE FROM stratasync_base WHERE tbl = ? AND rowid_ = ? AND col = ?")
            .execute(arguments: [table, rowid, column])
    }

    /// Keeps `value` (wire text) as the base of one column of object `rowid` of `entity`.
    func keepBase(_ entity: SyncedTables.Entity, _ rowid: Int64, _ column: SyncedTables.Column, _ value: String?, _ db: Database) throws {
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO stratasync_base (tbl, rowid_, col, old) VALUES (?, ?, ?, ?)")
            .execute(arguments: [entity.name, rowid, column.name, Self.agreedValue(of: value, column)])
    }

    /// Marks object `rowid` of `table` agreed with the server (it was new here).
    func markAgreed(_ table: String, _ rowid: Int64, _ db: Database) throws {
        try db.cachedStatement(sql: "UPDATE stratasync_ids SET state = 1 WHERE k = \(Self.key) AND state = 0")
            .execute(arguments: [table, rowid])
    }

    /// The agreed values of the columns of object `rowid` changed here since it last agreed
    /// with the server (wire text); empty when none was.
    func changedColumns(_ entity: SyncedTables.Entity, _ rowid: Int64, _ db: Database) throws -> [String: String?] {
        var result: [String: String?] = [:]
        let found = try Row.fetchAll(
            db.cachedStatement(sql: "SELECT col, old FROM stratasync_base WHERE tbl = ? AND rowid_ = ?"), arguments: [entity.name, rowid])
        for row in found {
            let name: String = row[0]
            guard let column = entity.column(named: name) else { continue }
            result[name] = Self.text(ofAgreed: row[1], column)
        }
        return result
    }

    /// The objects of `entity` with columns changed here since they last agreed with the
    /// server, by local key: each one's sync id, whether it is agreed (live and not new), and
    /// the agreed values (wire text) of its changed columns. One read of the bases.
    func changedObjects(
        _ entity: SyncedTables.Entity, _ db: Database
    ) throws -> [(rowid: Int64, uuid: UUID?, isAgreed: Bool, changed: [String: String?])] {
        var result: [(rowid: Int64, uuid: UUID?, isAgreed: Bool, changed: [String: String?])] = []
        let rows = try Row.fetchCursor(
            db.cachedStatement(sql: """
                SELECT b.rowid_, b.col, b.old, i.uuid, i.state FROM stratasync_base b \
                LEFT JOIN stratasync_ids i ON i.k = \(LocalSyncState.packedKeySQL("b.rowid_", LocalSyncState.numberSQL("b.tbl"))) \
                WHERE b.tbl = ? ORDER BY b.rowid_
                """),
            arguments: [entity.name])
        while let row = try rows.next() {
            let rowid: Int64 = row[0]
            if result.last?.rowid != rowid {
                let uuid = (row[3] as Data?).flatMap(LocalSyncState.uuid)
                result.append((rowid, uuid, (row[4] as Int?) == 1, [:]))
            }
            let name: String = row[1]
            guard let column = entity.column(named: name) else { continue }
            result[result.count - 1].changed[name] = Self.text(ofAgreed: row[2], column)
        }
        return result
    }

    /// Drops every base of the objects `rowids` of `table` (they agree with the server now).
    func dropBases(_ table: String, _ rowids: [Int64], _ db: Database) throws {
        let statement = try db.cachedStatement(sql: "DELETE FROM stratasync_base WHERE tbl = ? AND rowid_ = ?")
        for rowid in rowids { try statement.execute(arguments: [table, rowid]) }
    }

    /// Marks the objects `rowids` of `table` agreed with the server (they were new here).
    func markAgreed(_ table: String, _ rowids: [Int64], _ db: Database) throws {
        if try rowids.count == newObjectCount(table, db) {
            // Every object of the table new here (the push is whole): one statement.
            try db.execute(
                sql: "UPDATE stratasync_ids SET state = 1 WHERE state = 0 AND \(LocalSyncState.tableNumberSQL("k")) = \(LocalSyncState.numberSQL("?"))", arguments: [table])
        } else {
            for rowid in rowids { try markAgreed(table, rowid, db) }
        }
    }

    /// The base of an agreed object: its values as last agreed with the server, from its
    /// values here (`current`) and the columns changed since.
    func base(_ entity: SyncedTables.Entity, _ rowid: Int64, current: [String: String?], _ db: Database) throws -> [String: String?] {
        var base = current
        for (column, value) in try changedColumns(entity, rowid, db) { base[column] = value }
        return base
    }

    /// Records that object `rowid` of `entity` and the server agree on `values` (wire text,
    /// some or all columns): each column whose value here (`current`, read when nil) differs
    /// keeps `values`' as its base; the others hold the agreed value. The object is agreed.
    func agree(
        _ entity: SyncedTables.Entity, _ rowid: Int64, on values: [String: String?], current: [String: String?]? = nil, _ db: Database
    ) throws {
        let now = try current ?? self.values(entity, [rowid], db)[rowid] ?? [:]
        let based = try Set(String.fetchAll(
            db.cachedStatement(sql: "SELECT col FROM stratasync_base WHERE tbl = ? AND rowid_ = ?"), arguments: [entity.name, rowid]))
        for (name, value) in values {
            guard let column = entity.column(named: name) else { continue }
            if now[name] == value {
                if based.contains(name) { try dropBase(entity.name, rowid, name, db) }
            } else {
                try keepBase(entity, rowid, column, value, db)
            }
        }
        try markAgreed(entity.name, rowid, db)
    }

    /// Records that a pull wrote the server's values `server` into object `rowid` of
    /// `entity`, except the columns `keeping` (changed here and not pushed yet: they keep
    /// this device's value, and the server's becomes their base). What the store's own rules
    /// wrote meanwhile is taken as agreed, as the sync's own writes are never pushed.
    func agreeAfterPull(
        _ entity: SyncedTables.Entity, _ rowid: Int64, server: [String: String?], keeping: Set<String>, _ db: Database
    ) throws {
        for (name, value) in server {
            guard let column = entity.column(named: name) else { continue }
            if keeping.contains(name) {
                try keepBase(entity, rowid, column, value, db)
            } else {
                try dropBase(entity.name, rowid, name, db)
            }
        }
        try markAgreed(entity.name, rowid, db)
    }

    /// Replaces the changed columns of object `rowid` by `changed` (wire text: each column's
    /// agreed value).
    func writeBase(_ entity: SyncedTables.Entity, _ rowid: Int64, _ changed: [String: String?], _ db: Database) throws {
        try db.cachedStatement(sql: "DELETE FROM stratasync_base WHERE tbl = ? AND rowid_ = ?").execute(arguments: [entity.name, rowid])
        for (name, value) in changed {
            guard let column = entity.column(named: name) else { continue }
            try db.cachedStatement(sql: "INSERT INTO stratasync_base (tbl, rowid_, col, old) VALUES (?, ?, ?, ?)")
                .execute(arguments: [entity.name, rowid, name, Self.agreedValue(of: value, column)])
        }
    }

    /// A column's agreed value as `stratasync_base` keeps it: a reference's destination as its
    /// sync id's bytes, any other value as the store keeps it.
    static func agreedValue(of text: String?, _ column: SyncedTables.Column) -> DatabaseValue {
        if case .reference = column.kind { return text.flatMap(LocalSyncState.blob)?.databaseValue ?? .null }
        return SyncValue.databaseValue(of: text, as: column.valueType)
    }

    /// The wire text of an agreed value `stratasync_base` keeps.
    static func text(ofAgreed value: DatabaseValue, _ column: SyncedTables.Column) -> String? {
        if case .reference = column.kind { return Data.fromDatabaseValue(value).map(LocalSyncState.text) }
        return SyncValue.text(of: value, as: column.valueType)
    }

    /// The values of `entity`'s rows `rowids` as wire text, references as sync ids: every
    /// column, or the columns `wanted`.
    func values(
        _ entity: SyncedTables.Entity, _ rowids: [Int64], only wanted: Set<String>? = nil, _ db: Database
    ) throws -> [Int64: [String: String?]] {
        var result: [Int64: [String: String?]] = [:]
        result.reserveCapacity(rowids.count)
        let columns = entity.columns.filter { wanted?.contains($0.name) ?? true }
        let list = ([quoted(entity.primaryKey)] + columns.map { quoted($0.name) }).joined(separator: ", ")
        // Many rows refer to few destinations (the cards of a board): each destination's sync
        // id is looked up once per call.
        var destinations: [String: [Int64: String?]] = [:]
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
                var values: [String: String?] = Dictionary(minimumCapacity: columns.count)
                for (offset, column) in columns.enumerated() {
                    let value: DatabaseValue = row[offset + 1]
                    if case .reference(let destination) = column.kind {
                        if let id = Int64.fromDatabaseValue(value) {
                            if let known = destinations[destination]?[id] {
                                values[column.name] = known
                            } else {
                                let found = try uuid(destination, id, db)
                                destinations[destination, default: [:]][id] = .some(found)
                                values[column.name] = found
                            }
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
        guard let a = LocalSyncState.blob(a), let b = LocalSyncState.blob(b) else { return false }
        return try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT 1 FROM stratasync_links WHERE tbl = ? AND a = ? AND b = ?"), arguments: [join.name, a, b]) ?? false
    }

    func setAgreedLink(_ table: String, _ a: String, _ b: String, _ linked: Bool, _ db: Database) throws {
        guard let a = LocalSyncState.blob(a), let b = LocalSyncState.blob(b) else { return }
        if linked {
            try db.cachedStatement(sql: "INSERT OR IGNORE INTO stratasync_links (tbl, a, b) VALUES (?, ?, ?)").execute(arguments: [table, a, b])
        } else {
            try db.cachedStatement(sql: "DELETE FROM stratasync_links WHERE tbl = ? AND a = ? AND b = ?").execute(arguments: [table, a, b])
        }
    }

    /// The pairs of local keys of `join`'s links the server is known to have, between live
    /// objects.
    func agreedLinkPairs(_ join: SyncedTables.Join, _ db: Database) throws -> [[Int64]] {
        try Row.fetchAll(db, sql: """
            SELECT \(LocalSyncState.localKeySQL("x.k")), \(LocalSyncState.localKeySQL("y.k")) FROM stratasync_links l \
            JOIN stratasync_ids x ON \(LocalSyncState.uuidMatchSQL("x", "l.a")) \
            JOIN stratasync_ids y ON \(LocalSyncState.uuidMatchSQL("y", "l.b")) WHERE l.tbl = ?
            """, arguments: [join.name]).map { [$0[0], $0[1]] }
    }

    /// Forgets an object entirely (its id, its base, its tombstone, the links the server had
    /// with it).
    func forget(_ uuid: String, _ db: Database) throws {
        guard let blob = LocalSyncState.blob(uuid) else { return }
        try db.cachedStatement(sql: """
            DELETE FROM stratasync_base WHERE (tbl, rowid_) IN (SELECT t.tbl, \(LocalSyncState.localKeySQL("i.k")) FROM stratasync_ids i \
            JOIN stratasync_tables t ON t.n = \(LocalSyncState.tableNumberSQL("i.k")) WHERE \(Self.byID))
            """).execute(arguments: [blob])
        try db.cachedStatement(sql: "DELETE FROM stratasync_ids AS i WHERE \(Self.byID)").execute(arguments: [blob])
        try db.cachedStatement(sql: "DELETE FROM stratasync_tombstones WHERE uuid = ?").execute(arguments: [blob])
        try db.cachedStatement(sql: "DELETE FROM stratasync_links WHERE a = ? OR b = ?").execute(arguments: [blob, blob])
    }
}
