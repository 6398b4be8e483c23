import Foundation
import GRDB

/// The file of a store, with its `-wal` and `-shm` companions: the checks made before
/// SQLite opens it, the connections the store opens on it in turn, and the errors of those
/// opens as ``StoreOpenError``s.
///
/// A store opens its file in three steps, so that the file is not changed before it is
/// accepted and no connection of the store predates its migration:
/// 1. ``inspect(_:)``: a connection that does not write decides whether the file can be
///    used, and what opening it takes (see ``SchemaMigrator/step(_:)``);
/// 2. ``withMigrationConnection(configuration:_:)``: only when something must be written, a
///    connection of its own creates or migrates the schema, and is closed;
/// 3. ``openPool(configuration:)``: the store's own connections.
struct StoreFile {
    let path: String

    var walPath: String { path + "-wal" }
    var shmPath: String { path + "-shm" }
    var folder: String {
        let folder = (path as NSString).deletingLastPathComponent
        return folder.isEmpty ? "." : folder
    }

    private var fileManager: FileManager { .default }

    /// Whether there is a file at the path.
    var exists: Bool { fileManager.fileExists(atPath: path) }

    // MARK: - Checks before SQLite

    /// Throws the ``StoreOpenError`` that the file system already tells: a missing folder,
    /// a folder given as the path, missing permissions, a file that does not start like a
    /// SQLite database.
    func checkAccess() throws {
        if path.isEmpty { throw StoreOpenError(path: path, reason: .emptyPath) }
        var isDirectory: ObjCBool = false
        if fileManager.fileExists(atPath: path, isDirectory: &isDirectory) {
            if isDirectory.boolValue { throw StoreOpenError(path: path, reason: .isDirectory) }
            guard fileManager.isReadableFile(atPath: path), fileManager.isWritableFile(atPath: path) else {
                throw StoreOpenError(path: path, reason: .permissionDenied)
            }
        } else {
            guard fileManager.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw StoreOpenError(path: path, reason: .missingFolder)
            }
        }
        // SQLite creates the -wal and -shm files beside the database, and removes them.
        guard fileManager.isWritableFile(atPath: folder) else {
            throw StoreOpenError(path: path, reason: .permissionDenied)
        }
        if !hasDatabaseHeader() { throw StoreOpenError(path: path, reason: .notADatabase) }
    }

    /// Whether the file is empty (SQLite makes a database of it) or starts with the SQLite
    /// header; true when there is no file.
    private func hasDatabaseHeader() -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return true }
        defer { try? handle.close() }
        let header = (try? handle.read(upToCount: 100)) ?? Data()
        return header.isEmpty || (header.count == 100 && header.starts(with: Self.magic))
    }

    /// The first bytes of every SQLite database file.
    private static let magic = Data("SQLite format 3\u{0}".utf8)

    // MARK: - Connections

    /// Runs `body` on a connection to the existing file that does not write it, and leaves
    /// no `-wal` or `-shm` file that was not there.
    ///
    /// Without companions, nothing else has the file open in WAL mode: a read-write
    /// connection with writes disabled (`PRAGMA query_only`) reads it, and, the last to close,
    /// lets SQLite remove the `-wal` and `-shm` it may have created. With companions —
    /// another connection may be using the file, or a crash left committed transactions in
    /// the `-wal` — a read-only connection reads them, and cannot move them into the file
    /// when it closes, as the last read-write connection would.
    func inspect<T>(_ body: (Database) throws -> T) throws -> T {
        let hadWAL = fileManager.fileExists(atPath: walPath)
        let hadSHM = fileManager.fileExists(atPath: shmPath)
        var configuration = Store.connectionConfiguration(label: "Strata.inspection")
        if hadWAL || hadSHM {
            configuration.readonly = true
        } else {
            configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA query_only = ON") }
        }
        defer {
            // A read-only connection leaves a companion it had to create beside the other.
            if hadWAL != hadSHM {
                if !hadWAL { try? fileManager.removeItem(atPath: walPath) }
                if !hadSHM { try? fileManager.removeItem(atPath: shmPath) }
            }
        }
        let queue = try opening { try DatabaseQueue(path: path, configuration: configuration) }
        defer { try? queue.close() }
        return try opening { try queue.read(body) }
    }

    /// Runs `body` with a read-write connection of its own, closed when `body` returns.
    func withMigrationConnection(configuration: Configuration, _ body: (DatabaseQueue) throws -> Void) throws {
        var configuration = configuration
        configuration.label = "Strata.migration"
        let queue = try opening { try DatabaseQueue(path: path, configuration: configuration) }
        do {
            try body(queue)
        } catch {
            try? queue.close()
            throw error
        }
        try opening { try queue.close() }
    }

    /// The store's connections: a pool in WAL mode.
    func openPool(configuration: Configuration) throws -> DatabasePool {
        try opening { try DatabasePool(path: path, configuration: configuration) }
    }

    // MARK: - Errors

    /// Runs `body`, turning the SQLite errors of opening the file into ``StoreOpenError``s.
    /// Other errors (a ``MigrationError`` among them) pass through.
    private func opening<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as DatabaseError {
            throw openError(error)
        }
    }

    /// The ``StoreOpenError`` of an SQLite error met while opening the file.
    func openError(_ error: DatabaseError) -> StoreOpenError {
        let code = error.resultCode
        switch code {
        case .SQLITE_NOTADB, .SQLITE_CORRUPT:
            return StoreOpenError(path: path, reason: .notADatabase)
        case .SQLITE_PERM, .SQLITE_READONLY, .SQLITE_AUTH:
            return StoreOpenError(path: path, reason: .permissionDenied)
        default:
            // The file system may tell more (a folder removed since the checks, say).
            do {
                try checkAccess()
            } catch let error as StoreOpenError {
                return error
            } catch {}
            return StoreOpenError(
                path: path, reason: .sqlite(code: code.rawValue, message: error.message ?? "\(code)"))
        }
    }
}
