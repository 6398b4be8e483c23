import Foundation
import GRDB

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
