import Foundation
import PostgresNIO

/// A sync that failed before it could do its work, said in words: the server refused the
/// role's password, the database does not exist, the role lacks a privilege that sync needs,
/// or the connection to the server failed. ``PostgresSyncServer`` turns postgres-nio's `PSQLError` into this
/// error for these cases (its description is a generic text, the SQLSTATE only in
/// `String(reflecting:)`); other errors pass through unchanged. A background sync
/// (``StoreSync/start()``) retries each of them, and keeps the last in ``StoreSync/lastError``.
///
/// The description names the role, the database, the table and the privilege, never the
/// password or the values of a statement:
///
/// ```
/// sync: the role "notes_sync" lacks a privilege on table "Note" (its INSERT was refused)
/// (SQLSTATE 42501, permission denied for table Note). Sync needs SELECT, INSERT, UPDATE,
/// DELETE on it; grant them as the database's owner: GRANT SELECT, INSERT, UPDATE, DELETE ON
/// TABLE "Note" TO "notes_sync" (the sync article lists every privilege a device's role needs).
/// ```
///
/// Nothing is lost: the changes stay in the store and are pushed by the first sync that
/// gets through.
public struct SyncConnectionError: Error, CustomStringConvertible, LocalizedError, Sendable {
    /// What went wrong.
    public enum Reason: Hashable, Sendable {
        /// The server refused the credentials of `role` (SQLSTATE 28P01, or 28000: no
        /// `pg_hba.conf` line lets the role in).
        case authenticationFailed(role: String)
        /// The database `database` does not exist on the server (SQLSTATE 3D000).
        case databaseDoesNotExist(database: String)
        /// `role` lacks a privilege on `object` (`table "Note"`, `sequence
        /// strata_sync_log_seq_seq`, `schema public`) (SQLSTATE 42501). `privileges`: what
        /// sync needs on it, as the sync article's least-privilege role has them (`SELECT,
        /// INSERT, UPDATE, DELETE` on a synced table, `USAGE` on the log's sequence, `CREATE`
        /// on a schema: creating or extending tables); `statement`: the refused statement's
        /// kind (`INSERT`), when known.
        case insufficientPrivilege(role: String, object: String, privileges: String, statement: String?)
        /// The connection to the server at `endpoint` (a host and port, or a socket path)
        /// could not be made, or was lost: no server listens there, or it stopped.
        case connectionFailed(endpoint: String)
    }

    /// What went wrong.
    public let reason: Reason
    /// The server's SQLSTATE, when the server answered.
    public let sqlState: String?
    /// postgres-nio's error, for `String(reflecting:)`.
    public let underlying: any Error
    /// What the server said (its message, without the statement), when it answered.
    public let serverMessage: String?

    public var description: String {
        let code = sqlState.map { "SQLSTATE \($0)" + (serverMessage.map { ", \($0)" } ?? "") }
        let cause = code.map { " (\($0))" } ?? ""
        switch reason {
        case .authenticationFailed(let role):
            return "sync: the server refused the password of the role \"\(role)\"\(cause). Check the username and "
                + "password of the PostgresConnection.Configuration, and that a pg_hba.conf line lets the role in "
                + "with that method."
        case .databaseDoesNotExist(let database):
            return "sync: the database \"\(database)\" does not exist on the server\(cause). Create it (createdb, or "
                + "CREATE DATABASE as a role that may), or name an existing one in the configuration's database."
        case .insufficientPrivilege(let role, let object, let privileges, let statement):
            let refused = statement.map { " (its \($0) was refused)" } ?? ""
            if object.hasPrefix("schema ") {
                return "sync: the role \"\(role)\" lacks the CREATE privilege on \(object)\(cause): it cannot create or "
                    + "extend the sync tables. Apply PostgresSchema(schema:).sql (or `strata sql --dialect postgresql`) as "
                    + "the database's owner and connect with .requireExisting, or sync as the owner."
            }
            return "sync: the role \"\(role)\" lacks a privilege on \(object)\(refused)\(cause). Sync needs "
                + "\(privileges) on it; grant them as the database's owner: GRANT \(privileges) ON "
                + "\(object.uppercasedFirstWord) TO \"\(role)\" (the sync article lists every privilege a device's role needs)."
        case .connectionFailed(let endpoint):
            return "sync: the connection to the PostgreSQL server at \(endpoint) failed (\(Self.reflectingFirstLine(underlying))). "
                + "Check that the server is running and listens there (host and port, or the socket's folder); "
                + "a background sync tries again by itself."
        }
    }

    public var errorDescription: String? { description }

    /// `error` in words when it is one of the cases above, else `error` itself.
    static func translating(_ error: any Error, configuration: PostgresConnection.Configuration) -> any Error {
        guard let error = error as? PSQLError else { return error }
        let role = configuration.username
        if error.code == .connectionError {
            let endpoint = configuration.unixSocketPath.map { "the socket \($0)" }
                ?? "\(configuration.host ?? "?"):\(configuration.port ?? 5432)"
            return SyncConnectionError(
                reason: .connectionFailed(endpoint: endpoint), sqlState: nil, underlying: error, serverMessage: nil)
        }
        guard let state = error.serverInfo?[.sqlState] else { return error }
        let message = error.serverInfo?[.message]
        let reason: Reason
        switch state {
        case "28P01", "28000":
            reason = .authenticationFailed(role: role)
        case "3D000":
            reason = .databaseDoesNotExist(database: configuration.database ?? role)
        case "42501":
            let object = message.flatMap(Self.deniedObject) ?? "a table of the sync"
            reason = .insufficientPrivilege(
                role: role, object: object, privileges: Self.privileges(on: object),
                statement: error.query.flatMap { Self.statementKind($0.sql) })
        default:
            return error
        }
        return SyncConnectionError(reason: reason, sqlState: state, underlying: error, serverMessage: message)
    }

    /// `table "Note"` from `permission denied for table "Note"` (PostgreSQL's wording since 11).
    static func deniedObject(in message: String) -> String? {
        let prefix = "permission denied for "
        guard let range = message.range(of: prefix) else { return nil }
        let rest = message[range.upperBound...]
        let words = rest.split(separator: " ", maxSplits: 1)
        guard words.count == 2 else { return nil }
        let name = String(words[1])
        let quoted = name.hasPrefix("\"") || words[0] != "table" ? name : "\"\(name)\""
        return "\(words[0]) \(quoted)"
    }

    /// What sync needs on `object`: the sync article's grants.
    static func privileges(on object: String) -> String {
        if object.hasPrefix("sequence ") { return "USAGE" }
        if object.hasPrefix("schema ") { return "CREATE" }
        if object.contains("strata_sync_meta") { return "SELECT" }
        if object.contains("strata_sync_log") || object.contains("strata_sync_pushes") { return "SELECT, INSERT" }
        return "SELECT, INSERT, UPDATE, DELETE"
    }

    /// `INSERT` for an `INSERT …` statement (its first keyword), nil for others.
    static func statementKind(_ sql: String) -> String? {
        let first = sql.uppercased().split(whereSeparator: { !$0.isLetter }).first.map(String.init)
        return first.flatMap { ["SELECT", "INSERT", "UPDATE", "DELETE", "CREATE", "ALTER"].contains($0) ? $0 : nil }
    }

    static func reflectingFirstLine(_ error: any Error) -> String {
        let underlying = (error as? PSQLError)?.underlying.map { String(describing: $0) } ?? "connection failed"
        return underlying.split(separator: "\n").first.map(String.init) ?? underlying
    }
}

extension String {
    /// `TABLE "Note"` from `table "Note"`: the object as a GRANT names it.
    fileprivate var uppercasedFirstWord: String {
        guard let space = firstIndex(of: " ") else { return uppercased() }
        return self[..<space].uppercased() + self[space...]
    }
}
