import Foundation
import GRDB

/// A read-only connection to the store's file that holds a read transaction open, so that it
/// keeps seeing the database as it was at one commit while others commit after it (SQLite's
/// WAL isolation). Its user moves it forward (``advance()``) when it no longer needs the state
/// before a commit: batched results read their pages through one, and move it after each
/// commit, once the values that commit changed have been kept for older snapshots. A reader
/// that follows the commits is registered with the store's ``WALCheckpoints``
/// (``WALCheckpoints/follow(_:)``), which ends its transaction around a checkpoint of the log.
///
/// ``Store/close()`` releases it (ends the transaction and closes the connection, so that
/// the close can empty the WAL), through the close handler it gives the store; reads after
/// that open the file for each read.
final class PinnedReader: @unchecked Sendable {
    private let path: String
    private let lock = NSLock()
    private var queue: DatabaseQueue?
    private weak var store: Store?

    init(store: Store, path: String) throws {
        self.path = path
        self.store = store
        let queue = try DatabaseQueue(path: path, configuration: Self.configuration())
        try queue.inDatabase { db in try Self.begin(db) }
        self.queue = queue
        store.onClose(of: self) { [weak self] in self?.release() }
    }

    deinit {
        store?.removeCloseHandler(of: ObjectIdentifier(self))
        try? queue?.close()
    }

    private static func configuration() -> Configuration {
        var configuration = Store.connectionConfiguration(label: "Strata.PinnedReader")
        configuration.readonly = true
        // The read transaction stays open between accesses: that is the pin.
        configuration.allowsUnsafeTransactions = true
        return configuration
    }

    private static func begin(_ db: Database) throws {
        try db.beginTransaction(.deferred)
        // A read starts the transaction's view of the database.
        _ = try Row.fetchOne(db, sql: "SELECT 1 FROM sqlite_master LIMIT 1")
    }

    /// Reads in the pinned state (the file's state, after ``release()``).
    func read<T>(_ body: (Database) throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        if let queue { return try queue.inDatabase(body) }
        let transient = try DatabaseQueue(path: path, configuration: Self.configuration())
        defer { try? transient.close() }
        return try transient.inDatabase(body)
    }

    /// Moves the pinned state to the last commit.
    func advance() throws {
        lock.lock()
        defer { lock.unlock() }
        guard let queue else { return }
        try queue.inDatabase { db in
            if db.isInsideTransaction { try db.commit() }
            try Self.begin(db)
        }
    }

    /// Ends the read transaction for a checkpoint of the log, holding the lock (no page is
    /// read) until ``resumeAfterCheckpoint()``, on the same thread (the writer's, right
    /// after a commit and its handlers, which moved this reader to it): the state pinned
    /// again is the same, as no commit of this store can come in between. (Another process's
    /// commit can, as between a commit and ``advance()``.)
    func suspendForCheckpoint() {
        lock.lock()
        try? queue?.inDatabase { db in if db.isInsideTransaction { try db.commit() } }
    }

    /// Pins the state again after ``suspendForCheckpoint()``: on the database file alone
    /// when the log was copied whole, so that the next write can start the log over.
    func resumeAfterCheckpoint() {
        defer { lock.unlock() }
        guard let queue else { return }
        do {
            try queue.inDatabase { db in try Self.begin(db) }
        } catch {
            // No state pinned: the next read pins the file's (as after release()).
            try? queue.close()
            self.queue = nil
        }
    }

    /// Ends the read transaction and closes the connection.
    func release() {
        lock.lock()
        defer { lock.unlock() }
        guard let queue else { return }
        try? queue.inDatabase { db in if db.isInsideTransaction { try db.commit() } }
        try? queue.close()
        self.queue = nil
    }
}
