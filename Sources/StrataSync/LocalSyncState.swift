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
            """
            CREATE TRIGGER IF NOT EXISTS \(quoted("stratasync_insert_\(entity.name)")) AFTER INSERT ON \(table) BEGIN \
            INSERT OR IGNORE INTO stratasync_objects (uuid, tbl, rowid_) VALUES (\(uuidSQL), \(name), NEW.\(key)); END
            """,
            """
            CREATE TRIGGER IF NOT EXISTS \(quoted("stratasync_delete_\(entity.name)")) AFTER DELETE ON \(table) BEGIN \
            DELETE FROM stratasync_objects WHERE tbl = \(name) AND rowid_ = OLD.\(key) AND deleted = 0 AND base IS NULL; \
            UPDATE stratasync_objects SET deleted = 1 WHERE tbl = \(name) AND rowid_ = OLD.\(key) AND deleted = 0; END
            """,
        ]
    }

    /// Makes the tables and triggers, and catches up on rows written while the triggers were
    /// missing (a first sync of an existing store, a table rebuilt by a migration): every
    /// row without a sync id gets one, and every id whose row is gone becomes a tombstone.
    static func prepare(_ tables: SyncedTables, _ db: Database) throws {
        for statement in createSQL { try db.execute(sql: statement) }
        for entity in tables.entities {
            for statement in triggers(for: entity) { try db.execute(sql: statement) }
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

    static func encode(_ values: [String: String?]) -> String {
        let data = (try? JSONEncoder.sorted.encode(values)) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    static func decode(_ text: String?) -> [String: String?]? {
        guard let text else { return nil }
        return try? JSONDecoder().decode([String: String?].self, from: Data(text.utf8))
    }
}

extension JSONEncoder {
    static var sorted: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
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
