import Foundation
import GRDB
import Strata

/// The sync's state inside the store file, written in the same transactions as the data it
/// describes, so that a device killed at any point restarts from a consistent state. Its
/// format (3; see Docs/Decisions.md, "The sync's state costs what it keeps"):
///
/// - `stratasync_tables`: a number for each synced table (`n`, from 1), kept for good: a
///   local key is stored with its table's number packed in (``packedKeySQL(_:_:)``).
/// - `stratasync_ids`: each live synced object's sync id (`uuid`, 16 bytes), keyed by its
///   packed local key `k` (the local key times 1,024 plus the table's number, the table's
///   rowid), and its `state`: 0 new here (the server has not acknowledged it), 1 agreed with
///   the server. An index on the id's first 4 bytes finds an object by its sync id (the
///   whole id compared in the row).
/// - `stratasync_tombstones`: the sync id, table and local key of each agreed object deleted
///   here whose deletion is not pushed yet (few: read whole, no index but the id).
/// - `stratasync_base`: the base of an agreed object, sparsely: for each column changed here
///   since the object last agreed with the server, the value they agreed on (a reference's
///   as its destination's sync id). A column without a row here holds the agreed value. A
///   trigger per synced table writes these rows for every update, whichever program writes
///   the file, except the sync's own writes of the server's state (made while
///   `stratasync_applying` holds a row, inside the sync's transaction).
/// - `stratasync_links`: the many-to-many links the server is known to have.
/// - `stratasync_state`: the device id, the server id, the history token pushed through, the
///   server's log position pulled through, the format.
/// - `stratasync_outbox`: the push under way, kept until the server acknowledges it, and sent
///   again, unchanged, after a crash or a lost answer.
/// - `stratasync_conflicts`: what the sync could not keep (see ``SyncConflict``).
///
/// Triggers stored in the file give every new row of a synced table its sync id, record the
/// agreed value of every column changed, and keep a tombstone of every deleted object,
/// whichever program writes the file. They are named `stratasync_…` (a store's migrations
/// leave them alone, but rebuilding a table drops them): the sync makes them again, and
/// catches up on the rows written meanwhile, every time it starts. A store of an earlier
/// format (1: text ids and a whole JSON base per object; 2: ids keyed by id and indexed by
/// table name and local key) is migrated in place the first time the sync starts on it.
///
/// A synced table's local keys lie within ±2^53 (``maximumKey``): a row with a key beyond is
/// refused by its insert trigger, with an error that says so.
struct LocalSyncState {
    /// The tables the sync keeps state for (what the instance methods read and write; the
    /// static ones take what they need).
    let tables: SyncedTables

    /// The format of the sync's state this version writes.
    static let format = 3

    /// The low bits of a packed key that hold the table's number; the others hold the local
    /// key. Every packing and unpacking, in Swift and in SQL, is made from it.
    static let tableBits: Int64 = 10

    /// How many tables the packed keys leave room for (a table's number is below it).
    static let tableSlots: Int64 = 1 << tableBits

    /// The largest local key a synced table may hold (its packed key fits 64 bits); the
    /// smallest is its opposite.
    static let maximumKey: Int64 = Int64.max / tableSlots

    static let createSQL = [
        "CREATE TABLE IF NOT EXISTS stratasync_tables (n INTEGER PRIMARY KEY, tbl TEXT NOT NULL UNIQUE)",
        "CREATE TABLE IF NOT EXISTS stratasync_ids (k INTEGER PRIMARY KEY, uuid BLOB NOT NULL, state INTEGER NOT NULL DEFAULT 0)",
        // By sync id: its first 4 bytes (a look-up compares the whole id in the row). A query
        // names the same expression (``uuidMatchSQL(_:_:)``): SQLite uses an index on an
        // expression only for that expression.
        "CREATE INDEX IF NOT EXISTS stratasync_ids_uuid ON stratasync_ids (substr(uuid, 1, 4))",
        // The objects new here (few, and read at every push). Each query names the condition
        // (`state = 0`): SQLite uses a partial index only for a query whose terms include it.
        "CREATE INDEX IF NOT EXISTS stratasync_ids_new ON stratasync_ids (k) WHERE state = 0",
        """
        CREATE TABLE IF NOT EXISTS stratasync_tombstones (uuid BLOB NOT NULL PRIMARY KEY, tbl TEXT NOT NULL, \
        rowid_ INTEGER NOT NULL) WITHOUT ROWID
        """,
        """
        CREATE TABLE IF NOT EXISTS stratasync_base (tbl TEXT NOT NULL, rowid_ INTEGER NOT NULL, col TEXT NOT NULL, old, \
        PRIMARY KEY (tbl, rowid_, col)) WITHOUT ROWID
        """,
        "CREATE TABLE IF NOT EXISTS stratasync_applying (one INTEGER)",
        "CREATE TABLE IF NOT EXISTS stratasync_state (key TEXT NOT NULL PRIMARY KEY, value TEXT NOT NULL)",
        // The links the server is known to have, by the sync ids of their two objects.
        "CREATE TABLE IF NOT EXISTS stratasync_links (tbl TEXT NOT NULL, a BLOB NOT NULL, b BLOB NOT NULL, PRIMARY KEY (tbl, a, b)) WITHOUT ROWID",
        "CREATE TABLE IF NOT EXISTS stratasync_outbox (push TEXT NOT NULL PRIMARY KEY, body BLOB NOT NULL)",
        """
        CREATE TABLE IF NOT EXISTS stratasync_conflicts (seq INTEGER PRIMARY KEY, date REAL NOT NULL, tbl TEXT NOT NULL, \
        object TEXT, kind TEXT NOT NULL, reason TEXT NOT NULL, local TEXT, server TEXT)
        """,
    ]

    // MARK: - Packed keys

    /// SQL of the packed key (`stratasync_ids.k`) of local key `key` in the table numbered
    /// `number` (both SQL expressions).
    static func packedKeySQL(_ key: String, _ number: String) -> String { "(\(key) * \(tableSlots) + \(number))" }

    /// SQL of the local key that the packed key `packed` (an SQL expression) holds.
    static func localKeySQL(_ packed: String) -> String { "(\(packed) >> \(tableBits))" }

    /// SQL of the table's number that the packed key `packed` (an SQL expression) holds.
    static func tableNumberSQL(_ packed: String) -> String { "(\(packed) & \(tableSlots - 1))" }

    /// SQL of the number of the table named by the SQL expression `table` (NULL for a table
    /// without one).
    static func numberSQL(_ table: String) -> String { "(SELECT n FROM stratasync_tables WHERE tbl = \(table))" }

    /// SQL that is true for the row of `stratasync_ids` aliased `alias` whose sync id is the
    /// SQL expression `uuid` (through the index on its first bytes).
    static func uuidMatchSQL(_ alias: String, _ uuid: String) -> String {
        "substr(\(alias).uuid, 1, 4) = substr(\(uuid), 1, 4) AND \(alias).uuid = \(uuid)"
    }

    /// The packed key of local key `key` in the table numbered `number`.
    static func packedKey(_ key: Int64, _ number: Int64) -> Int64 { key &* tableSlots &+ number }

    /// Each synced table's number (numbering the tables that have none yet, for good).
    @discardableResult
    static func numberTables(_ tables: SyncedTables, _ db: Database) throws -> [String: Int64] {
        try numberTables(named: tables.entities.map(\.name), db)
    }

    /// The number of every table the file has numbered, `names` among them (those without
    /// one get the next numbers, for good).
    static func numberTables(named names: some Sequence<String>, _ db: Database) throws -> [String: Int64] {
        var numbers = try tableNumbers(db)
        for name in names where numbers[name] == nil {
            let next = (numbers.values.max() ?? 0) + 1
            guard next < tableSlots else { throw SyncSetupError.tooManyTables(numbers.count) }
            try db.execute(sql: "INSERT INTO stratasync_tables (n, tbl) VALUES (?, ?)", arguments: [next, name])
            numbers[name] = next
        }
        return numbers
    }

    /// The number of each table the file has numbered.
    static func tableNumbers(_ db: Database) throws -> [String: Int64] {
        var numbers: [String: Int64] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT tbl, n FROM stratasync_tables") { numbers[row[0]] = row[1] }
        return numbers
    }

    // MARK: - Sync ids

    /// A sync id's 16 bytes, as the file keeps it; nil for text that is not a UUID.
    static func blob(_ text: String) -> Data? {
        guard let uuid = SyncValue.uuid(text) else { return nil }
        return blob(uuid)
    }

    static func blob(_ uuid: UUID) -> Data {
        withUnsafeBytes(of: uuid.uuid) { Data($0) }
    }

    /// The wire text of a sync id the file keeps (lowercase, with dashes).
    static func text(_ blob: Data) -> String {
        guard blob.count == 16 else { return blob.map { String(format: "%02x", $0) }.joined() }
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &bytes) { $0.copyBytes(from: blob) }
        return SyncValue.text(of: UUID(uuid: bytes))
    }

    static func uuid(_ blob: Data) -> UUID? {
        guard blob.count == 16 else { return SyncValue.uuid(text(blob)) }
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &bytes) { $0.copyBytes(from: blob) }
        return UUID(uuid: bytes)
    }

    // MARK: - Triggers

    static func insertTriggerName(_ entity: SyncedTables.Entity) -> String { "stratasync_insert_\(entity.name)" }
    static func deleteTriggerName(_ entity: SyncedTables.Entity) -> String { "stratasync_delete_\(entity.name)" }
    static func updateTriggerName(_ entity: SyncedTables.Entity) -> String { "stratasync_update_\(entity.name)" }

    /// The triggers of `entity`'s table: its insert, delete and update triggers, with the
    /// tables' numbers `numbers` (``numberTables(_:_:)``).
    static func triggers(for entity: SyncedTables.Entity, numbers: [String: Int64]) -> [String] {
        let table = quoted(entity.name), key = quoted(entity.primaryKey), name = literal(entity.name)
        let number = String(numbers[entity.name] ?? 0)
        let oldKey = packedKeySQL("OLD.\(key)", number), newKey = packedKeySQL("NEW.\(key)", number)
        // An agreed column's value, as `stratasync_base` keeps it: a reference's as the sync id
        // of its destination (live, or a tombstone deleted in the same transaction).
        func agreed(_ column: SyncedTables.Column) -> String {
            if case .reference(let destination) = column.kind {
                let c = "OLD.\(quoted(column.name))"
                return """
                    COALESCE((SELECT uuid FROM stratasync_ids WHERE k = \(packedKeySQL(c, String(numbers[destination] ?? 0)))), \
                    (SELECT uuid FROM stratasync_tombstones WHERE tbl = \(literal(destination)) AND rowid_ = \(c)))
                    """
            }
            return "OLD.\(quoted(column.name))"
        }
        let records = entity.columns.map { column in
            let c = quoted(column.name)
            return """
                INSERT OR IGNORE INTO stratasync_base SELECT \(name), OLD.\(key), \(literal(column.name)), \(agreed(column)) \
                WHERE OLD.\(c) IS NOT NEW.\(c);
                """
        }
        var statements = [
            // The row's sync id, unless it has one (every row a pull inserts has: the primary
            // key ignores this one). A random 16 bytes: the server's `uuid` columns take any. A
            // key whose packed form does not fit 64 bits is refused.
            """
            CREATE TRIGGER IF NOT EXISTS \(quoted(insertTriggerName(entity))) AFTER INSERT ON \(table) BEGIN \
            SELECT RAISE(ABORT, 'Strata sync: a synced table''s keys lie within -\(maximumKey)...\(maximumKey)') \
            WHERE NEW.\(key) NOT BETWEEN -\(maximumKey) AND \(maximumKey); \
            INSERT OR IGNORE INTO stratasync_ids (k, uuid, state) VALUES (\(newKey), randomblob(16), 0); END
            """,
            // An object the server never had goes; an agreed one leaves a tombstone.
            """
            CREATE TRIGGER IF NOT EXISTS \(quoted(deleteTriggerName(entity))) AFTER DELETE ON \(table) BEGIN \
            INSERT OR IGNORE INTO stratasync_tombstones (uuid, tbl, rowid_) \
            SELECT uuid, \(name), OLD.\(key) FROM stratasync_ids WHERE k = \(oldKey) AND state = 1; \
            DELETE FROM stratasync_ids WHERE k = \(oldKey); \
            DELETE FROM stratasync_base WHERE tbl = \(name) AND rowid_ = OLD.\(key); END
            """,
        ]
        if !entity.columns.isEmpty {
            statements.append("""
                CREATE TRIGGER IF NOT EXISTS \(quoted(updateTriggerName(entity))) AFTER UPDATE ON \(table) \
                WHEN NOT EXISTS (SELECT 1 FROM stratasync_applying) \
                AND EXISTS (SELECT 1 FROM stratasync_ids WHERE k = \(oldKey) AND state = 1) BEGIN \
                \(records.joined(separator: " ")) END
                """)
        }
        return statements
    }

    /// The text SQLite keeps in `sqlite_master` for a `CREATE TRIGGER IF NOT EXISTS` statement
    /// (without the `IF NOT EXISTS`).
    static func storedSQL(of statement: String) -> String {
        statement.replacingOccurrences(of: "CREATE TRIGGER IF NOT EXISTS ", with: "CREATE TRIGGER ")
    }

    /// The name of the trigger a `CREATE TRIGGER IF NOT EXISTS "name" …` statement makes.
    static func triggerName(of statement: String) -> String {
        let rest = statement.dropFirst("CREATE TRIGGER IF NOT EXISTS \"".count)
        return String(rest.prefix { $0 != "\"" })
    }

    /// Makes the tables and triggers (migrating a store of the first format), and catches up
    /// on rows written while the triggers were missing (a first sync of an existing store, a
    /// table rebuilt by a migration): every row without a sync id gets one, and every id
    /// whose row is gone becomes a tombstone. A table whose update trigger was missing while
    /// it held agreed objects may have changed unseen: the server is read again from the
    /// start at the next pull (its state wins for those rows).
    static func prepare(_ tables: SyncedTables, _ db: Database) throws {
        let earlierFormat: Int? =
            if try db.tableExists("stratasync_objects") { 1 }
            else if try db.tableExists("stratasync_ids"), try db.columns(in: "stratasync_ids").contains(where: { $0.name == "tbl" }) { 2 }
            else { nil }
        switch earlierFormat {
        case 1: try LocalSyncState.migrateFromFirstFormat(tables, db)
        case 2: try LocalSyncState.migrateFromSecondFormat(tables, db)
        default: for statement in createSQL { try db.execute(sql: statement) }
        }
        let numbers = try numberTables(tables, db)
        var readAgain = false
        for entity in tables.entities {
            let number = numbers[entity.name] ?? 0
            // A trigger of this name other than this version's text goes (an earlier version's).
            for statement in triggers(for: entity, numbers: numbers) {
                let name = triggerName(of: statement)
                let stored = try String.fetchOne(
                    db, sql: "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?", arguments: [name])
                if let stored, stored != storedSQL(of: statement) { try db.execute(sql: "DROP TRIGGER \(quoted(name))") }
                if stored == nil, name == updateTriggerName(entity), earlierFormat == nil {
                    readAgain = try readAgain || Bool.fetchOne(
                        db, sql: "SELECT EXISTS (SELECT 1 FROM stratasync_ids WHERE \(tableNumberSQL("k")) = ? AND state = 1)", arguments: [number]) == true
                }
                try db.execute(sql: statement)
            }
            let table = quoted(entity.name), key = quoted(entity.primaryKey), name = literal(entity.name)
            // Rows written while the triggers were missing: a key beyond the packed range is
            // refused as the insert trigger refuses it.
            if let beyond = try Int64.fetchOne(
                db, sql: "SELECT \(key) FROM \(table) WHERE \(key) < -\(maximumKey) OR \(key) > \(maximumKey) LIMIT 1")
            {
                throw DatabaseError(
                    message: "Strata sync: a synced table's keys lie within -\(maximumKey)...\(maximumKey); \(entity.name) holds \(beyond)")
            }
            try db.execute(sql: """
                INSERT OR IGNORE INTO stratasync_ids (k, uuid, state) SELECT \(packedKeySQL(key, String(number))), randomblob(16), 0 \
                FROM \(table)
                """)
            // An id whose row is gone: a new object's goes, an agreed one's becomes a tombstone.
            let gone = "\(tableNumberSQL("k")) = \(number) AND \(localKeySQL("k")) NOT IN (SELECT \(key) FROM \(table))"
            try db.execute(sql: """
                INSERT OR IGNORE INTO stratasync_tombstones (uuid, tbl, rowid_) \
                SELECT uuid, \(name), \(localKeySQL("k")) FROM stratasync_ids WHERE state = 1 AND \(gone)
                """)
            try db.execute(sql: "DELETE FROM stratasync_ids WHERE \(gone)")
            try db.execute(sql: """
                DELETE FROM stratasync_base WHERE tbl = \(name) AND rowid_ NOT IN (SELECT \(key) FROM \(table))
                """)
        }
        if readAgain { try set("rescan", "1", db) }
        try recordColumns(tables, numbers: numbers, db)
        try set("format", String(format), db)
    }

    /// Records the columns of each synced table, and gives the agreed objects of a table that
    /// gained columns since (a migration of the store) a base of nil in each new column: their
    /// values here are pushed, as any value changed here since the last agreement.
    static func recordColumns(_ tables: SyncedTables, numbers: [String: Int64], _ db: Database) throws {
        for entity in tables.entities {
            let names = entity.columns.map(\.name)
            let key = "columns.\(entity.name)"
            if let known = try value(key, db) {
                let before = Set(known.split(separator: ",").map(String.init))
                for name in names where !before.contains(name) {
                    try db.execute(
                        sql: """
                            INSERT OR IGNORE INTO stratasync_base (tbl, rowid_, col, old) \
                            SELECT ?, \(localKeySQL("k")), ?, NULL FROM stratasync_ids WHERE \(tableNumberSQL("k")) = ? AND state = 1
                            """,
                        arguments: [entity.name, name, numbers[entity.name] ?? 0])
                }
            }
            try set(key, names.joined(separator: ","), db)
        }
    }

    /// Runs `body` as the sync writing the server's state: the update triggers record no
    /// base for what it writes (the caller keeps the bases itself).
    static func applyingServerState<T>(_ db: Database, _ body: () throws -> T) throws -> T {
        try db.execute(sql: "INSERT INTO stratasync_applying (one) VALUES (1)")
        do {
            let result = try body()
            try db.execute(sql: "DELETE FROM stratasync_applying")
            return result
        } catch {
            try? db.execute(sql: "DELETE FROM stratasync_applying")
            throw error
        }
    }

    static func value(_ key: String, _ db: Database) throws -> String? {
        try String.fetchOne(db, sql: "SELECT value FROM stratasync_state WHERE key = ?", arguments: [key])
    }

    static func set(_ key: String, _ value: String, _ db: Database) throws {
        try db.execute(
            sql: "INSERT INTO stratasync_state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            arguments: [key, value])
    }

    /// The server's log position pulled through (0 before the first pull).
    static func cursor(_ db: Database) throws -> Int64 { Int64(try value("cursor", db) ?? "0") ?? 0 }

    /// The history token whose changes are pushed (or in the push under way).
    static func pushedToken(_ db: Database) throws -> HistoryToken {
        HistoryToken(rawValue: Int64(try value("pushed", db) ?? "0") ?? 0)
    }

    static func remove(_ key: String, _ db: Database) throws {
        try db.execute(sql: "DELETE FROM stratasync_state WHERE key = ?", arguments: [key])
    }

    // MARK: - The outbox

    /// The push written and not answered yet: its id and its changes (JSON).
    static func pendingPush(_ db: Database) throws -> (id: UUID, body: Data)? {
        guard let row = try Row.fetchOne(db, sql: "SELECT push, body FROM stratasync_outbox LIMIT 1"),
              let id = SyncValue.uuid(row["push"])
        else { return nil }
        return (id, row["body"])
    }

    static func writePush(_ id: UUID, body: Data, _ db: Database) throws {
        try db.execute(sql: "INSERT INTO stratasync_outbox (push, body) VALUES (?, ?)", arguments: [id.syncText, body])
    }

    /// The outbox's body of a push: its changes as JSON, the form `JSONDecoder` reads back
    /// into the same `[SyncChange]` (written directly: a push of thousands of objects spent
    /// more time in `JSONEncoder` than in reading them).
    static func outboxBody(_ changes: [SyncChange]) -> Data {
        var bytes: [UInt8] = [UInt8(ascii: "[")]
        bytes.reserveCapacity(changes.count * 160)
        func key(_ name: String) {
            SyncJSON.appendJSONString(name, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
        }
        for (offset, change) in changes.enumerated() {
            if offset > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(UInt8(ascii: "{"))
            key("kind")
            SyncJSON.appendJSONString(change.kind.rawValue, to: &bytes)
            bytes.append(UInt8(ascii: ","))
            key("table")
            SyncJSON.appendJSONString(change.table, to: &bytes)
            if let id = change.id {
                bytes.append(UInt8(ascii: ","))
                key("id")
                SyncJSON.appendJSONString(id.syncText, to: &bytes)
            }
            bytes.append(UInt8(ascii: ","))
            key("values")
            bytes.append(UInt8(ascii: "{"))
            for (index, (name, value)) in change.values.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                key(name)
                if let value { SyncJSON.appendJSONString(value, to: &bytes) } else { bytes += SyncValue.jsonNull }
            }
            bytes.append(UInt8(ascii: "}"))
            if let link = change.link {
                bytes.append(UInt8(ascii: ","))
                key("link")
                bytes.append(UInt8(ascii: "{"))
                for (index, (name, id)) in link.enumerated() {
                    if index > 0 { bytes.append(UInt8(ascii: ",")) }
                    key(name)
                    SyncJSON.appendJSONString(id.syncText, to: &bytes)
                }
                bytes.append(UInt8(ascii: "}"))
            }
            bytes.append(UInt8(ascii: "}"))
        }
        bytes.append(UInt8(ascii: "]"))
        return Data(bytes)
    }

    static func removePush(_ id: UUID, _ db: Database) throws {
        try db.execute(sql: "DELETE FROM stratasync_outbox WHERE push = ?", arguments: [id.syncText])
    }

    // MARK: - The conflict log

    /// Appends `conflict` (its sequence is the log's next) to `stratasync_conflicts`.
    static func insertConflict(_ conflict: SyncConflict, _ db: Database) throws {
        try db.execute(
            sql: "INSERT INTO stratasync_conflicts (date, tbl, object, kind, reason, local, server) VALUES (?, ?, ?, ?, ?, ?, ?)",
            arguments: [
                conflict.date.timeIntervalSince1970, conflict.table, conflict.object?.uuidString.lowercased(), conflict.kind.rawValue,
                conflict.reason, conflict.localValues.map(SyncJSON.encode), conflict.serverValues.map(SyncJSON.encode),
            ])
    }

    /// The conflicts recorded after position `sequence`, in order.
    static func conflicts(since sequence: Int64, _ db: Database) throws -> [SyncConflict] {
        try Row.fetchAll(db, sql: "SELECT * FROM stratasync_conflicts WHERE seq > ? ORDER BY seq", arguments: [sequence]).map { row in
            SyncConflict(
                sequence: row["seq"], date: Date(timeIntervalSince1970: row["date"]),
                kind: SyncConflict.Kind(rawValue: row["kind"]) ?? .refusedByServer, table: row["tbl"],
                object: (row["object"] as String?).flatMap(UUID.init(uuidString:)), reason: row["reason"],
                localValues: SyncJSON.decode(row["local"]), serverValues: SyncJSON.decode(row["server"]))
        }
    }

    // MARK: - The conflict log's positions

    /// The position of the last conflict recorded (0: none).
    static func lastConflict(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(seq), 0) FROM stratasync_conflicts") ?? 0
    }

    /// How many conflicts were recorded after position `sequence`, of `kind` (any when nil).
    static func conflictCount(after sequence: Int64, kind: SyncConflict.Kind? = nil, _ db: Database) throws -> Int {
        if let kind {
            return try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM stratasync_conflicts WHERE seq > ? AND kind = ?", arguments: [sequence, kind.rawValue]) ?? 0
        }
        return try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM stratasync_conflicts WHERE seq > ?", arguments: [sequence]) ?? 0
    }
}
