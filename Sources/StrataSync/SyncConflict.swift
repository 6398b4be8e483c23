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

    /// Records a conflict in the store file's log (see ``LocalSyncState/insertConflict(_:_:)``).
    static func record(
        _ kind: Kind, table: String, object: UUID?, reason: String, local: [String: String?]?, server: [String: String?]?,
        _ db: Database
    ) throws {
        try LocalSyncState.insertConflict(
            SyncConflict(
                sequence: 0, date: Date(), kind: kind, table: table, object: object, reason: reason, localValues: local,
                serverValues: server),
            db)
    }

    static func fetch(since sequence: Int64, _ db: Database) throws -> [SyncConflict] {
        try LocalSyncState.conflicts(since: sequence, db)
    }
}
