import Foundation
import GRDB

/// The file of a store, with its `-wal` and `-shm` companions, and the connections the
/// store opens on it in turn.
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

    private var fileManager: FileManager { .default }

    /// Whether there is a file at the path.
    var exists: Bool { fileManager.fileExists(atPath: path) }

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
        var configuration = Configuration()
        configuration.label = "Strata.inspection"
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
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        defer { try? queue.close() }
        return try queue.read(body)
    }

    /// Runs `body` with a read-write connection of its own, closed when `body` returns.
    func withMigrationConnection(configuration: Configuration, _ body: (DatabaseQueue) throws -> Void) throws {
        var configuration = configuration
        configuration.label = "Strata.migration"
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        do {
            try body(queue)
        } catch {
            try? queue.close()
            throw error
        }
        try queue.close()
    }

    /// The store's connections: a pool in WAL mode.
    func openPool(configuration: Configuration) throws -> DatabasePool {
        try DatabasePool(path: path, configuration: configuration)
    }
}
