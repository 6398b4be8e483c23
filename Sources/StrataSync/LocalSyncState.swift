import Foundation
import GRDB
import Strata

/// The sync's state inside the store file, written in the same transactions as the data it
/// describes, so that a device killed at any point restarts from a consistent state:
///
/// - `stratasync_objects`: each synced object's sync id (`uuid`) for its local key
///   (`rowid_`), and `base`, its values as last agreed with the server (JSON; NULL for an
///   object the server has not acknowledged yet). A deleted object stays as a tombstone
///   (`deleted = 1`) until its deletion is pushed.
/// - `stratasync_links`: the many-to-many links the server is known to have.
/// - `stratasync_state`: the device id, the server id, the history token pushed through, the
///   server's log position pulled through.
/// - `stratasync_outbox`: the push under way, kept until the server acknowledges it, and sent
///   again, unchanged, after a crash or a lost answer.
/// - `stratasync_conflicts`: what the sync could not keep (see ``SyncConflict``).
///
/// Triggers stored in the file give every new row of a synced table its sync id and keep a
/// tombstone of every deleted one, whichever program writes the file. They are named
/// `stratasync_…` (a store's migrations leave them alone, but rebuilding a table drops
/// them): the sync makes them again, and catches up on the rows written meanwhile, every
/// time it starts.
enum LocalSyncState {
    static let objects = "stratasync_objects"

    static let createSQL = [
        """
        CREATE TABLE IF NOT EXISTS stratasync_objects (uuid TEXT NOT NULL PRIMARY KEY, tbl TEXT NOT NULL, \
        rowid_ INTEGER NOT NULL, base TEXT, deleted INTEGER NOT NULL DEFAULT 0)
        """,
        "CREATE UNIQUE INDEX IF NOT EXISTS stratasync_objects_row ON stratasync_objects (tbl, rowid_) WHERE deleted = 0",
        "CREATE INDEX IF NOT EXISTS stratasync_objects_pending ON stratasync_objects (tbl) WHERE base IS NULL OR deleted = 1",
        "CREATE TABLE IF NOT EXISTS stratasync_state (key TEXT NOT NULL PRIMARY KEY, value TEXT NOT NULL)",
        // The links the server is known to have, by the sync ids of their two objects.
        "CREATE TABLE IF NOT EXISTS stratasync_links (tbl TEXT NOT NULL, a TEXT NOT NULL, b TEXT NOT NULL, PRIMARY KEY (tbl, a, b))",
        "CREATE TABLE IF NOT EXISTS stratasync_outbox (push TEXT NOT NULL PRIMARY KEY, body BLOB NOT NULL)",
        """
        CREATE TABLE IF NOT EXISTS stratasync_conflicts (seq INTEGER PRIMARY KEY, date REAL NOT NULL, tbl TEXT NOT NULL, \
        object TEXT, kind TEXT NOT NULL, reason TEXT NOT NULL, local TEXT, server TEXT)
        """,
    ]

    /// A random version-4 UUID, in SQL.
    static let uuidSQL = """
        (lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) \
        || '-' || substr('89ab', 1 + (random() & 3), 1) || substr(lower(hex(randomblob(2))), 2) || '-' \
        || lower(hex(randomblob(6))))
        """

    static func triggers(for entity: SyncedTables.Entity) -> [String] {
        let table = quoted(entity.name), key = quoted(entity.primaryKey), name = literal(entity.name)
        return [
            // The row's sync id, unless it has one (every row a pull inserts has): the look-up is
            // the trigger's condition, not the `INSERT`'s, because an `INSERT … SELECT` that
            // reads its own table goes through a temporary table, which SQLite opened and closed
            // for every row. Its text keeps `WHERE NOT EXISTS`, which the previous version looks
            // for: a store opened by both does not have its trigger rewritten back and forth.
            """
            CREATE TRIGGER IF NOT EXISTS \(quoted(insertTriggerName(entity))) AFTER INSERT ON \(table) \
            WHEN (SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM stratasync_objects WHERE tbl = \(name) AND rowid_ = NEW.\(key) AND deleted = 0)) \
            BEGIN INSERT OR IGNORE INTO stratasync_objects (uuid, tbl, rowid_) VALUES (\(uuidSQL), \(name), NEW.\(key)); END
            """,
            """
            CREATE TRIGGER IF NOT EXISTS \(quoted("stratasync_delete_\(entity.name)")) AFTER DELETE ON \(table) BEGIN \
            DELETE FROM stratasync_objects WHERE tbl = \(name) AND rowid_ = OLD.\(key) AND deleted = 0 AND base IS NULL; \
            UPDATE stratasync_objects SET deleted = 1 WHERE tbl = \(name) AND rowid_ = OLD.\(key) AND deleted = 0; END
            """,
        ]
    }

    static func insertTriggerName(_ entity: SyncedTables.Entity) -> String { "stratasync_insert_\(entity.name)" }

    /// The text SQLite keeps in `sqlite_master` for a `CREATE TRIGGER IF NOT EXISTS` statement
    /// (without the `IF NOT EXISTS`).
    static func storedSQL(of statement: String) -> String {
        statement.replacingOccurrences(of: "CREATE TRIGGER IF NOT EXISTS ", with: "CREATE TRIGGER ")
    }

    /// Makes the tables and triggers, and catches up on rows written while the triggers were
    /// missing (a first sync of an existing store, a table rebuilt by a migration): every
    /// row without a sync id gets one, and every id whose row is gone becomes a tombstone.
    static func prepare(_ tables: SyncedTables, _ db: Database) throws {
        for statement in createSQL { try db.execute(sql: statement) }
        for entity in tables.entities {
            // The identity trigger of earlier versions is replaced: the first made a random id for
            // every row, which the `OR IGNORE` dropped when the sync had given the row its id
            // already (every row a pull inserts); the second looked first, but inside an
            // `INSERT … SELECT` of its own table, which SQLite runs through a temporary table
            // opened and closed per row. Any trigger of that name other than this version's goes.
            let statements = triggers(for: entity)
            let insertTrigger = insertTriggerName(entity)
            if let sql = try String.fetchOne(
                db, sql: "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?", arguments: [insertTrigger]),
                sql != storedSQL(of: statements[0])
            {
                try db.execute(sql: "DROP TRIGGER \(quoted(insertTrigger))")
            }
            for statement in statements { try db.execute(sql: statement) }
            let table = quoted(entity.name), key = quoted(entity.primaryKey), name = literal(entity.name)
            try db.execute(sql: """
                INSERT INTO stratasync_objects (uuid, tbl, rowid_) SELECT \(uuidSQL), \(name), \(key) FROM \(table) \
                WHERE \(key) NOT IN (SELECT rowid_ FROM stratasync_objects WHERE tbl = \(name) AND deleted = 0)
                """)
            try db.execute(sql: """
                DELETE FROM stratasync_objects WHERE tbl = \(name) AND deleted = 0 AND base IS NULL \
                AND rowid_ NOT IN (SELECT \(key) FROM \(table))
                """)
            try db.execute(sql: """
                UPDATE stratasync_objects SET deleted = 1 WHERE tbl = \(name) AND deleted = 0 \
                AND rowid_ NOT IN (SELECT \(key) FROM \(table))
                """)
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
              let id = UUID(uuidString: row["push"])
        else { return nil }
        return (id, row["body"])
    }

    static func writePush(_ id: UUID, body: Data, _ db: Database) throws {
        try db.execute(sql: "INSERT INTO stratasync_outbox (push, body) VALUES (?, ?)", arguments: [id.uuidString.lowercased(), body])
    }

    static func removePush(_ id: UUID, _ db: Database) throws {
        try db.execute(sql: "DELETE FROM stratasync_outbox WHERE push = ?", arguments: [id.uuidString.lowercased()])
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

    /// A JSON object of `values`, keys sorted, as `JSONEncoder` with `.sortedKeys` writes it
    /// (written by hand: a pull or an acknowledgement encodes a base per object).
    static func encode(_ values: [String: String?]) -> String {
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        bytes.reserveCapacity(16 * values.count + 2)
        for (offset, key) in values.keys.sorted().enumerated() {
            if offset > 0 { bytes.append(UInt8(ascii: ",")) }
            appendJSONString(key, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            if let value = values[key] ?? nil {
                appendJSONString(value, to: &bytes)
            } else {
                bytes += SyncValue.jsonNull
            }
        }
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `string` as a JSON string (the one escaper of the sync: bases, and the server's
    /// bulk statements).
    static func appendJSONString(_ string: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { utf8 in
            // The bytes that need no escape go in runs (a pull writes a base per object).
            var start = 0
            for index in utf8.indices {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "/") else {
                    continue
                }
                if start < index { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index])) }
                start = index + 1
                appendEscape(of: byte, to: &bytes)
            }
            if start < utf8.count { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...])) }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// The JSON escape of a byte that needs one.
    private static func appendEscape(of byte: UInt8, to bytes: inout [UInt8]) {
        let hex = Array("0123456789abcdef".utf8)
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"):
            bytes.append(UInt8(ascii: "\\"))
            bytes.append(byte)
        case 0x08: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "b")]
        case 0x0C: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "f")]
        case 0x0A: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
        case 0x0D: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
        case 0x09: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
        default:
            bytes += [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
        }
    }

    /// The values of a JSON object of strings and nulls (what ``encode(_:)`` writes); nil for
    /// nil or text that is not one.
    static func decode(_ text: String?) -> [String: String?]? {
        guard let text else { return nil }
        if let values = parseFlatObject(text) { return values }
        // Not in the form written above: Foundation's decoder decides.
        return try? JSONDecoder().decode([String: String?].self, from: Data(text.utf8))
    }

    /// A hand-written reader of `{"key":"value","key":null,…}` (any JSON whitespace, every
    /// JSON escape); nil for anything else, which ``decode(_:)`` hands to `JSONDecoder`.
    static func parseFlatObject(_ text: String) -> [String: String?]? {
        var text = text
        return text.withUTF8 { (bytes: UnsafeBufferPointer<UInt8>) -> [String: String?]? in
            var index = 0
            func skipSpace() {
                while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
            }
            func hexValue(_ byte: UInt8) -> UInt32? {
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
                default: nil
                }
            }
            func unit() -> UInt32? {  // four hex digits after \u
                guard index + 4 <= bytes.count else { return nil }
                var value: UInt32 = 0
                for _ in 0..<4 {
                    guard let digit = hexValue(bytes[index]) else { return nil }
                    value = value << 4 | digit
                    index += 1
                }
                return value
            }
            func string() -> String? {
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
                index += 1
                let start = index
                while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\"), bytes[index] >= 0x20 {
                    index += 1
                }
                guard index < bytes.count else { return nil }
                if bytes[index] == UInt8(ascii: "\"") {
                    let result = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                    index += 1
                    return result
                }
                var result = Array(bytes[start..<index])
                while index < bytes.count {
                    let byte = bytes[index]
                    index += 1
                    switch byte {
                    case UInt8(ascii: "\""):
                        return String(decoding: result, as: UTF8.self)
                    case UInt8(ascii: "\\"):
                        guard index < bytes.count else { return nil }
                        let escape = bytes[index]
                        index += 1
                        switch escape {
                        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): result.append(escape)
                        case UInt8(ascii: "b"): result.append(0x08)
                        case UInt8(ascii: "f"): result.append(0x0C)
                        case UInt8(ascii: "n"): result.append(0x0A)
                        case UInt8(ascii: "r"): result.append(0x0D)
                        case UInt8(ascii: "t"): result.append(0x09)
                        case UInt8(ascii: "u"):
                            guard var scalar = unit() else { return nil }
                            if (0xD800..<0xDC00).contains(scalar) {
                                guard index + 2 <= bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                                else { return nil }
                                index += 2
                                guard let low = unit(), (0xDC00..<0xE000).contains(low) else { return nil }
                                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                            }
                            guard let character = Unicode.Scalar(scalar) else { return nil }
                            result += Array(String(Character(character)).utf8)
                        default:
                            return nil
                        }
                    case 0..<0x20:
                        return nil
                    default:
                        result.append(byte)
                    }
                }
                return nil
            }
            var values: [String: String?] = [:]
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else { return nil }
            index += 1
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
            } else {
                while true {
                    skipSpace()
                    guard let key = string() else { return nil }
                    skipSpace()
                    guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
                    index += 1
                    skipSpace()
                    if index + 4 <= bytes.count, bytes[index] == UInt8(ascii: "n"), bytes[index + 1] == UInt8(ascii: "u"),
                       bytes[index + 2] == UInt8(ascii: "l"), bytes[index + 3] == UInt8(ascii: "l")
                    {
                        index += 4
                        values[key] = .some(nil)
                    } else {
                        guard let value = string() else { return nil }
                        values[key] = .some(value)
                    }
                    skipSpace()
                    guard index < bytes.count else { return nil }
                    if bytes[index] == UInt8(ascii: ",") {
                        index += 1
                        continue
                    }
                    guard bytes[index] == UInt8(ascii: "}") else { return nil }
                    index += 1
                    break
                }
            }
            skipSpace()
            return index == bytes.count ? values : nil
        }
    }
}

/// Something the sync could not keep as it was, recorded in the store file and readable
/// with ``StoreSync/conflicts(since:)``: nothing is dropped without a trace.
public struct SyncConflict: Hashable, Sendable, Codable {
    /// What happened.
    public enum Kind: String, Hashable, Sendable, Codable {
        /// The server refused a change this device pushed (a unique constraint, a missing
        /// destination, a value rule, a `deny` delete rule); the device took the server's
        /// state of the object.
        case refusedByServer
        /// This device changed an object that the server deleted meanwhile: the deletion
        /// wins.
        case deletedOnServer
        /// A change from the server could not be applied here (a rule of this store refused
        /// it); the object keeps its local state until it changes again.
        case notAppliedHere
    }

    /// Its position in the conflict log (increasing).
    public var sequence: Int64
    public var date: Date
    public var kind: Kind
    /// The entity or join table.
    public var table: String
    /// The object's sync id (nil for links).
    public var object: UUID?
    /// Why, in words.
    public var reason: String
    /// The values this device had (wire text), when it had some.
    public var localValues: [String: String?]?
    /// The values the server has (nil when it has none).
    public var serverValues: [String: String?]?

    static func record(
        _ kind: Kind, table: String, object: UUID?, reason: String, local: [String: String?]?, server: [String: String?]?,
        _ db: Database
    ) throws {
        try db.execute(
            sql: "INSERT INTO stratasync_conflicts (date, tbl, object, kind, reason, local, server) VALUES (?, ?, ?, ?, ?, ?, ?)",
            arguments: [
                Date().timeIntervalSince1970, table, object?.uuidString.lowercased(), kind.rawValue, reason,
                local.map(LocalSyncState.encode), server.map(LocalSyncState.encode),
            ])
    }

    static func fetch(since sequence: Int64, _ db: Database) throws -> [SyncConflict] {
        try Row.fetchAll(db, sql: "SELECT * FROM stratasync_conflicts WHERE seq > ? ORDER BY seq", arguments: [sequence]).map { row in
            SyncConflict(
                sequence: row["seq"], date: Date(timeIntervalSince1970: row["date"]),
                kind: Kind(rawValue: row["kind"]) ?? .refusedByServer, table: row["tbl"],
                object: (row["object"] as String?).flatMap(UUID.init(uuidString:)), reason: row["reason"],
                localValues: LocalSyncState.decode(row["local"]), serverValues: LocalSyncState.decode(row["server"]))
        }
    }
}
