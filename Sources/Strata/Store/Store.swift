import Foundation
import GRDB

/// A SQLite store for the entities of one model.
///
/// ```swift
/// let store = try Store(schema: StrataModel.schema)          // the platform's data location
/// let note = try store.write { db in try db.insert(Note(title: "Milk", updatedAt: .now)) }
/// let notes = try store.read { db in try db.fetchAll(Note.Fetches.all) }
/// ```
///
/// A file store is a GRDB `DatabasePool` (WAL mode: reads run concurrently with the one
/// writer); an in-memory store is a `DatabaseQueue`. Every connection has foreign keys
/// and recursive triggers on, and the SQL function `strata_match` that string predicates
/// use. Opening creates the schema, or migrates the file's schema (see
/// <doc:DeleteRulesAndMigrations>): a store is returned only once that is done, and every
/// one of its connections sees the migrated schema. An open that is refused leaves the file
/// as it was.
public final class Store: Sendable {
    /// How a store opens.
    public struct Options: Hashable, Sendable {
        /// Apply destructive migrations (removed entities and attributes, changed types, new
        /// required attributes without default) instead of refusing them. Values that
        /// cannot be kept are replaced by the default, NULL, or a zero value.
        public var allowDataLoss: Bool

        /// Record every transaction of this store in the file's change history (see
        /// <doc:ChangeHistory>), in the transaction itself. On by default. Other stores on
        /// the same file, in this process or another, learn of a transaction only through
        /// its history: turn it off only for a store that no other connection observes.
        public var recordsHistory: Bool

        /// How often a file store checks whether another connection (another process,
        /// another store on the same file) committed, to deliver those commits to its
        /// observers and results controllers; nil never checks (call
        /// ``Store/checkForExternalCommits()`` instead). A tick looks at the `-wal` file
        /// (one `stat`: every commit writes it); only when it may have changed, and at least
        /// once a second, does it read one number (`PRAGMA data_version`) on the writer, and
        /// the history only when that changed. Stores that check at the same interval share
        /// one timer. The default, 50 ms, delivers another process's commit within about
        /// that time.
        public var externalCommitInterval: Duration?

        /// The author recorded for this store's transactions that do not name one (see
        /// ``Store/write(author:_:)``): "widget", "importer", … Nil by default.
        public var author: String?

        /// How far a commit of a file store is made durable before ``Store/write(_:)-94s9x``
        /// returns: ``Durability/normal`` by default.
        public var durability: Durability

        /// Options; by default, destructive migrations are refused, history is recorded,
        /// other connections' commits are checked for every 50 ms, and commits are synced to
        /// disk at checkpoints (``Durability/normal``).
        public init(
            allowDataLoss: Bool = false, recordsHistory: Bool = true,
            externalCommitInterval: Duration? = .milliseconds(50), author: String? = nil,
            durability: Durability = .normal
        ) {
            self.allowDataLoss = allowDataLoss
            self.recordsHistory = recordsHistory
            self.externalCommitInterval = externalCommitInterval
            self.author = author
            self.durability = durability
        }
    }

    /// How far a commit is made durable before its write returns: SQLite's `synchronous`
    /// setting of a file store's writer (the file is in WAL mode). Either way the file is
    /// never left corrupt or half-written, and every commit survives the app's crash or
    /// being killed; they differ after a power loss or an operating-system crash.
    ///
    /// A sync of the disk can be most of the time of a small write (one to several
    /// milliseconds on a shared virtual machine), and a user edit such as
    /// ``ResultsController/moveItem(from:to:)-(ItemPath,_)`` waits for its write on the
    /// delivery queue. See Docs/Decisions.md, "Durability".
    public enum Durability: Hashable, Sendable {
        /// The log is synced at checkpoints, not at each commit (`synchronous = NORMAL`, which
        /// SQLite recommends for WAL mode, and GRDB's database pools and Android use): the last
        /// commits before a power loss or an operating-system crash may be rolled back when
        /// the file is next opened, each one whole. The default.
        case normal
        /// Every commit is synced to disk before its write returns (`synchronous = FULL`):
        /// it survives a power loss too.
        case full
    }

    /// The model the store holds.
    public let schema: SchemaDescriptor
    /// The file's path; nil for an in-memory store.
    public let path: String?
    /// The options the store was opened with.
    public let options: Options
    /// The underlying GRDB writer, for GRDB's own APIs. Writes through it get the delete
    /// rules and are reported to commit observers like any other.
    public let writer: any DatabaseWriter

    let observer: CommitObserver
    let replacedRows: ReplacedRowLog
    let deniedDeletes = DeniedDeleteWatch()
    /// The writer-side checks of the model's rules (patterns, counts at commit).
    let ruleWatch: RuleWatch
    /// The required to-ones that each write transaction checks before it commits.
    private let requiredAtCommit: RequiredAtCommit
    /// Checks for other connections' commits (file stores with an interval only).
    private let externalCommits: ExternalCommitMonitor?
    /// Whether ``close()`` was called (and did not fail).
    private let closed = LockedValue(false)
    /// What must happen before the store's connections close, by owner: parts that hold
    /// connections of their own to the file (the pinned readers of batched results) release
    /// them here. The store knows nothing of its owners but this.
    private let closeHandlers = LockedValue<[ObjectIdentifier: @Sendable () -> Void]>([:])

    /// Runs `handler` when the store closes, before its connections do; replaces the handler
    /// `owner` gave before. An owner that goes away first removes it with
    /// ``removeCloseHandler(of:)``.
    func onClose(of owner: AnyObject, _ handler: @escaping @Sendable () -> Void) {
        closeHandlers.withLock { $0[ObjectIdentifier(owner)] = handler }
    }

    /// Removes the close handler of `owner`.
    func removeCloseHandler(of owner: ObjectIdentifier) {
        closeHandlers.withLock { $0[owner] = nil }
    }

    /// Opens (creating if needed) the store at the platform's default location:
    /// `$XDG_DATA_HOME` (or `~/.local/share`) on Linux, Application Support on Apple
    /// platforms, then `<name>/<name>.sqlite` with the schema's name. The folder is created
    /// when missing.
    ///
    /// - Throws: as ``init(schema:path:options:)``.
    public convenience init(schema: SchemaDescriptor, options: Options = Options()) throws {
        let url = Self.defaultURL(for: schema)
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        } catch {
            let denied = (error as? CocoaError)?.code == .fileWriteNoPermission
            throw StoreOpenError(path: url.path, reason: denied ? .permissionDenied : .missingFolder)
        }
        try self.init(schema: schema, path: url.path, options: options)
    }

    /// Opens (creating if needed) the store at `path`. The folder must exist.
    ///
    /// The file is checked before anything is written to it: whether it can be opened, is a
    /// SQLite database made by a Strata store, and holds a model that can be migrated without
    /// losing data (or `options` allow it). These checks run on a connection that does not
    /// write; a refused open leaves the file byte for byte as it was, and leaves no `-wal` or
    /// `-shm` file that was not there. A migration then runs on a connection of its own,
    /// closed before the store's connections open, so none of them predates it.
    ///
    /// ```swift
    /// do {
    ///     store = try Store(schema: StrataModel.schema, path: path)
    /// } catch let error as StoreOpenError {
    ///     print(error)   // "cannot open the store at …: the folder … does not exist; create it first, …"
    /// } catch let error as MigrationError {
    ///     print(error)   // "the model changed destructively: attribute Note.priority lost enum case urgent …"
    /// }
    /// ```
    ///
    /// - Throws: ``StoreOpenError`` when the file cannot be opened (a missing folder, a
    ///   folder given as the path, a file that is not a SQLite database, missing
    ///   permissions); ``MigrationError`` when the store refuses the file's content.
    public convenience init(schema: SchemaDescriptor, path: String, options: Options = Options()) throws {
        let file = StoreFile(path: path)
        let migrator = SchemaMigrator(schema: schema, allowDataLoss: options.allowDataLoss)
        try file.checkAccess()
        let step = file.exists ? try file.inspect { db in try migrator.step(db) } : .create
        if step.writes {
            do {
                try file.withMigrationConnection(configuration: Self.configuration()) { queue in try migrator.migrate(queue) }
            } catch let error where UniqueConstraintError(error) != nil {
                let unique = UniqueConstraintError(error)!
                let rows = (try? file.inspect { db in
                    try Self.duplicateGroups(of: unique, key: schema.entity(named: unique.entity)?.primaryKey, db)
                }) ?? []
                throw MigrationError.duplicateValues(entity: unique.entity, attributes: unique.attributes, rows: rows)
            }
        }
        let pool = try file.openPool(configuration: Self.configuration())
        try self.init(schema: schema, path: path, writer: pool, options: options)
    }

    /// The ids of the rows that share values of a unique constraint's columns, one group per
    /// set of equal values (at most 20), read from the unmigrated file.
    private static func duplicateGroups(of unique: UniqueConstraintError, key: String?, _ db: Database) throws -> [[Int64]] {
        let columns = unique.attributes.map(quoted).joined(separator: ", ")
        let key = quoted(key ?? "rowid"), table = quoted(unique.entity)
        let groups = try String.fetchAll(db, sql: """
            SELECT group_concat(\(key), ',') FROM (SELECT \(key), \(columns) FROM \(table) ORDER BY \(key)) \
            GROUP BY \(columns) HAVING count(*) > 1 ORDER BY min(\(key)) LIMIT 20
            """)
        return groups.map { $0.split(separator: ",").compactMap { Int64($0) } }
    }

    /// A store in memory, gone when released.
    public static func inMemory(schema: SchemaDescriptor, options: Options = Options()) throws -> Store {
        let queue = try DatabaseQueue(configuration: configuration())
        try SchemaMigrator(schema: schema, allowDataLoss: options.allowDataLoss).migrate(queue)
        return try Store(schema: schema, path: nil, writer: queue, options: options)
    }

    /// A store on `writer`, whose database already holds the schema.
    private init(schema: SchemaDescriptor, path: String?, writer: any DatabaseWriter, options: Options) throws {
        self.schema = schema
        self.path = path
        self.options = options
        self.writer = writer
        SchemaRegistry.register(schema)
        let replacedRows = ReplacedRowLog(schema: schema)
        self.replacedRows = replacedRows
        let observer = CommitObserver(
            columnsByTable: SchemaSQL(schema: schema).columnsByTable, replacedRows: replacedRows,
            deniedDeletes: deniedDeletes, recordsHistory: options.recordsHistory)
        self.observer = observer
        let deniedDeletes = self.deniedDeletes
        let ruleWatch = RuleWatch(schema: schema)
        self.ruleWatch = ruleWatch
        requiredAtCommit = RequiredAtCommit(schema: schema)
        try writer.writeWithoutTransaction { db in
            try ruleWatch.install(db, schema: schema)
            try observer.installJoinLog(db, joinTables: SchemaSQL(schema: schema).joinTables)
            try replacedRows.install(db)
            try deniedDeletes.install(db, schema: schema)
            try observer.startReadingHistory(db)
            if writer is DatabasePool {
                observer.checkpoints.install(db)
                // The pool's writer starts with NORMAL (set by GRDB with WAL mode).
                if options.durability == .full { try db.execute(sql: "PRAGMA synchronous = FULL") }
            }
        }
        writer.add(transactionObserver: ruleWatch, extent: .databaseLifetime)
        writer.add(transactionObserver: observer, extent: .databaseLifetime)
        if let pool = writer as? DatabasePool, let interval = options.externalCommitInterval {
            externalCommits = ExternalCommitMonitor(writer: pool, observer: observer, interval: interval)
        } else {
            externalCommits = nil
        }
    }

    deinit {
        externalCommits?.stop()
    }

    /// How many times the timer had the writer check for other connections' commits (for
    /// tests); nil when the store does not check on a timer.
    var externalCommitChecks: Int? { externalCommits?.checks.withLock { $0 } }

    /// Where ``init(schema:options:)`` puts the store of `schema`.
    public static func defaultURL(for schema: SchemaDescriptor) -> URL {
        #if canImport(Darwin)
        let base = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
            ?? URL(fileURLWithPath: NSHomeDirectory()).appendingPathComponent("Library/Application Support")
        #else
        let environment = ProcessInfo.processInfo.environment
        let base: URL
        if let xdg = environment["XDG_DATA_HOME"], !xdg.isEmpty, xdg.hasPrefix("/") {
            base = URL(fileURLWithPath: xdg)
        } else {
            let home = environment["HOME"] ?? NSHomeDirectory()
            base = URL(fileURLWithPath: home).appendingPathComponent(".local/share")
        }
        #endif
        return base.appendingPathComponent(schema.name).appendingPathComponent("\(schema.name).sqlite")
    }

    /// Closes the store's connections now. Using the store afterwards throws
    /// ``StoreError/closed`` (reads, writes, results controllers, the change history; the
    /// GRDB ``writer`` throws GRDB's own error); closing it again does nothing.
    ///
    /// Once `close()` returns, the database file alone holds every commit: the `-wal` is
    /// checkpointed into it and truncated, then removed with the `-shm` when the store held
    /// the file's last connection. The file can be copied, backed up or sent on its own.
    /// Reads still running are waited for first. When another connection — another store
    /// on the same file, another process — is reading at that moment, SQLite cannot move the
    /// commits its read may still need; they stay in the `-wal` until the file's last
    /// connection closes.
    ///
    /// A store that is released without `close()` closes its connections too; when they
    /// are the file's last, SQLite checkpoints the `-wal` into the file and removes it.
    public func close() throws {
        let wasOpen = closed.withLock { closed in
            defer { closed = true }
            return !closed
        }
        guard wasOpen else { return }
        // (Batched results' open reads would keep the commits in the -wal.)
        for handler in closeHandlers.withLock({ $0.values }) { handler() }
        externalCommits?.stop()
        do {
            try Self.close(writer)
        } catch {
            closed.withLock { $0 = false }
            throw error
        }
    }

    private static func close(_ writer: any DatabaseWriter) throws {
        if let pool = writer as? DatabasePool {
            // Readers close first (once their reads end), so that the writer is the file's last
            // connection: SQLite then checkpoints and removes the -wal and -shm when it closes.
            // GRDB closes the writer before the readers, and a read-only connection closing
            // last leaves the -wal as it is; hence the explicit checkpoint, which also covers
            // a read that starts meanwhile.
            pool.releaseMemory()
            do {
                try pool.barrierWriteWithoutTransaction { db in
                    // Not worth waiting for: another connection's read keeps it busy.
                    try db.execute(sql: "PRAGMA busy_timeout = 0")
                    _ = try db.checkpoint(.truncate)
                }
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY {
                // Another connection is reading: its read keeps the commits in the -wal.
            }
            try pool.close()
        }
        if let queue = writer as? DatabaseQueue { try queue.close() }
    }

    /// How long a write waits for another connection's write transaction (another process
    /// writing the same file) before it fails with `SQLITE_BUSY`, in seconds.
    static let busyTimeout: TimeInterval = 10

    /// What every connection a store opens starts from, the pool's and the ones it opens on
    /// the side (the file's inspection before an open, batched results' pinned readers):
    /// another connection may be writing the file, or closing it (the last one checkpoints
    /// the `-wal` under an exclusive lock), so each waits up to ``busyTimeout`` instead of
    /// failing at once.
    static func connectionConfiguration(label: String? = nil) -> Configuration {
        var configuration = Configuration()
        configuration.label = label
        configuration.busyMode = .timeout(Self.busyTimeout)
        return configuration
    }

    static func configuration() -> Configuration {
        var configuration = connectionConfiguration()
        configuration.foreignKeysEnabled = true
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA recursive_triggers = ON")
            db.add(function: StringMatching.sqlFunction)
            db.add(function: RuleWatch.matchFunction)
        }
        return configuration
    }
}

// MARK: - Reads and writes

extension Store {
    /// Runs `body` in a read-only snapshot of the database.
    public func read<T>(_ body: (Database) throws -> T) throws -> T {
        try mapErrors { try writer.read(body) }
    }

    /// Runs `body` in a read-only snapshot of the database, off the caller's thread.
    public func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await mapErrors { try await writer.read(body) }
    }

    /// Runs `body` in a write transaction: committed when it returns, rolled back when it
    /// throws.
    ///
    /// A delete refused by a `deny` rule fails the whole transaction with
    /// ``DeleteDeniedError``, even when `body` catches the error and goes on: SQLite undoes
    /// only the refused statement, so committing the rest could leave half of an operation
    /// done. The first refusal is thrown once `body` returns, and nothing is committed.
    ///
    /// ```swift
    /// try store.write { db in
    ///     try db.execute(sql: "UPDATE Notebook SET position = 0")
    ///     try? db.execute(sql: "DELETE FROM Notebook WHERE id = 1")  // refused by a deny rule
    /// }   // throws DeleteDeniedError; the update is rolled back too
    /// ```
    ///
    /// Writes made through ``writer`` directly get the deny rules too, but a refusal they
    /// catch is not turned into a failed transaction. SQLite has then reported changes that
    /// the refusal undid (the start of a cascade), so that commit lists every table it
    /// touched in ``CommittedChanges/invalidatedTables`` instead of their rows.
    ///
    /// The transaction is recorded in the file's change history (see <doc:ChangeHistory>)
    /// with the store's ``Options/author``; ``write(author:_:)-7gvxd`` names another.
    @discardableResult
    public func write<T>(_ body: (Database) throws -> T) throws -> T {
        try write(author: options.author, body)
    }

    /// The asynchronous ``write(_:)``.
    @discardableResult
    public func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await write(author: options.author, body)
    }

    /// Runs `body` in a write transaction, as ``write(_:)-94s9x``, and records `author` as the
    /// transaction's author in the change history: ``HistoryTransaction/author`` for readers
    /// of the history, ``CommittedChanges/authors`` for commit observers, here and in other
    /// processes. A sync engine writes the changes it pulls from a server with its own
    /// author, and leaves them out when it reads what to push
    /// (``changes(since:excludingAuthors:)``), so that they are not echoed back.
    ///
    /// ```swift
    /// try store.write(author: "sync") { db in
    ///     for note in pulled { try db.save(note) }
    /// }
    /// ```
    @discardableResult
    public func write<T>(author: String?, _ body: (Database) throws -> T) throws -> T {
        try mapErrors {
            try writer.write { db in try transaction(db, author: author, body) }
        }
    }

    /// The asynchronous ``write(author:_:)``.
    @discardableResult
    public func write<T: Sendable>(
        author: String?, _ body: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        try await mapErrors {
            try await writer.write { [self] db in try transaction(db, author: author, body) }
        }
    }

    /// The count rules (`minCount`, `maxCount`, a `required` one-to-one whose other side
    /// stores the key) that the objects whose links changed in the current write transaction
    /// break now: what the commit would refuse with ``RuleViolationError``. Call it inside
    /// ``write(author:_:)-7gvxd`` before the end of the body, to undo what breaks them instead (a sync
    /// engine applying what it can of a batch of changes does).
    public func brokenCountRules(_ db: Database) throws -> [RuleViolationError] {
        try ruleWatch.brokenCounts(db)
    }

    /// The body of every write transaction of the store.
    private func transaction<T>(_ db: Database, author: String?, _ body: (Database) throws -> T) throws -> T {
        try observer.trimJoinLog(db)
        try replacedRows.trim(db)
        deniedDeletes.reset()
        let result = try body(db)
        if let refused = deniedDeletes.refused { throw refused }
        if let unset = try requiredAtCommit.firstUnset(db) { throw unset }
        if let dangling = try ruleWatch.firstDangling(db) { throw dangling }
        try ruleWatch.recount(db)
        try observer.recordHistory(db, author: author)
        return result
    }

    /// Throws ``StoreError/closed`` once ``close()`` was called. (A closed file store's
    /// connections throw too; a closed in-memory store's would trap.)
    func checkOpen() throws {
        if closed.withLock({ $0 }) { throw StoreError.closed }
    }

    private func mapErrors<T>(_ body: () throws -> T) throws -> T {
        try checkOpen()
        do {
            return try body()
        } catch {
            throw typedError(error)
        }
    }

    private func mapErrors<T>(_ body: () async throws -> T) async throws -> T {
        try checkOpen()
        do {
            return try await body()
        } catch {
            throw typedError(error)
        }
    }

    /// The store's typed error for a GRDB error it knows, else the error itself.
    func typedError(_ error: any Error) -> any Error {
        // GRDB reports a closed connection as SQLITE_MISUSE ("out of memory" in its text).
        if error is DatabaseError && closed.withLock({ $0 }) { return StoreError.closed }
        if let denied = DeleteDeniedError(error) { return denied }
        if let identity = IdentityChangeError(error) { return identity }
        if let rule = RuleViolationError(error) { return rule }
        if let rule = RuleViolationError(constraintError: error, schema: schema) { return rule }
        if let unique = UniqueConstraintError(error) { return unique }
        if let storage = StorageError(error, path: path) { return storage }
        return error
    }
}

// MARK: - Committed changes

extension Store {
    /// Calls `handler` after each commit that changed rows of the store's tables, with the
    /// transaction's net changes, or that announced changes made outside the store
    /// (``Store/notifyExternalChanges(in:)``). Rolled back transactions are not reported.
    ///
    /// A commit of the second kind, like one made on ``writer`` after a delete refused by a
    /// `deny` rule was caught (see ``write(_:)-94s9x``), has ``CommittedChanges/invalidatedTables``
    /// and may have no row changes at all: a handler that looks only at ``CommittedChanges/tables`` must
    /// also treat an invalidated table as "everything in it may have changed".
    ///
    /// The handler runs synchronously on the writer's queue, right after the commit and
    /// before any other write can start: keep it short (hop to another queue for heavy
    /// work), and do not write from it. Commits are delivered one by one, in commit order.
    /// To re-read consistently — exactly the committed state, nothing later — use
    /// ``observeCommits(reading:)``, whose handler also gets the writer connection.
    ///
    /// Deliveries stop when the returned observation is cancelled or deinitialised.
    public func observeCommits(_ handler: @escaping @Sendable (CommittedChanges) -> Void) -> CommitObservation {
        observeCommits(reading: { changes, _ in handler(changes) })
    }

    /// Like ``observeCommits(_:)``, with the writer connection: reads made with it inside
    /// the handler see the state this commit left, before any later write of this store.
    ///
    /// Another process (or another store on the file) may commit between this commit and the
    /// handler's reads — the file is unlocked once a commit ends — and the reads then see its
    /// changes too. Those changes are always delivered afterwards, as changes of origin
    /// ``CommittedChanges/Origin/otherConnections`` that name every row they touched
    /// (deletions of rows inserted since included), so that what a handler derives from its
    /// reads converges: re-read the rows a delivery names, and treat a named row that no
    /// longer exists as deleted.
    public func observeCommits(
        reading handler: @escaping @Sendable (CommittedChanges, Database) -> Void
    ) -> CommitObservation {
        let key = observer.add(handler)
        return CommitObservation { [observer] in observer.remove(key) }
    }

    /// Announces that rows of `tables` (entity or join tables, by name; every table of the
    /// store when nil) changed outside the store — a connection that does not record the
    /// change history (a program that is not a Strata store) wrote to the file. SQLite reports
    /// no detail of such changes, so the commit this method makes lists the tables in
    /// ``CommittedChanges/invalidatedTables``, and results controllers that read them
    /// refetch and deliver the difference. The commit is recorded in the history, so stores
    /// in other processes refetch too. (Other Strata stores' commits need no announcement:
    /// see <doc:ChangeHistory>.)
    ///
    /// ```swift
    /// // After a tool wrote notes to the same file with the sqlite3 shell:
    /// try store.notifyExternalChanges(in: ["Note"])
    /// ```
    ///
    /// Calling GRDB's `Database.notifyChanges(in:)` inside ``write(_:)-94s9x`` also works, but
    /// GRDB does not tell the store which tables, so every table is invalidated.
    public func notifyExternalChanges(in tables: Set<String>? = nil) throws {
        try write { [observer] db in try observer.announceChanges(in: tables ?? observer.trackedTables, db) }
    }

    /// The committed changes, as an asynchronous sequence (buffered without limit, in
    /// commit order). Iteration ends when the task is cancelled.
    public func commits() -> AsyncStream<CommittedChanges> {
        AsyncStream { continuation in
            let observation = observeCommits { continuation.yield($0) }
            continuation.onTermination = { _ in observation.cancel() }
        }
    }
}
