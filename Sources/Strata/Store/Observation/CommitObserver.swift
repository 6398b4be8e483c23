import Foundation
import GRDB

typealias NSLockShim = NSLock

/// The store's GRDB transaction observer: collects the rows each transaction changes (from
/// SQLite's update hook, which reports trigger-made changes too) and, after each commit,
/// hands the net changes to the registered handlers, synchronously, on the writer.
/// Rolled back transactions (and savepoints) deliver nothing.
///
/// After each transaction in which anything happened to the tracked tables — rows changed,
/// or changes announced with `Database.notifyChanges(in:)` — the commit pipeline reads the
/// join-table log and the ``ReplacedRowLog`` (so that their read positions always advance),
/// merges them, and delivers the result unless it is empty.
///
/// SQLite's update hook reports changes as they happen, and GRDB does not take back those of
/// a statement that then fails. When a `deny` rule refused a delete (``DeniedDeleteWatch``)
/// in a transaction that commits anyway, the collected rows may include changes the refusal
/// undid — the deletes of a cascade cut short. The commit then reports every table the
/// transaction touched in ``CommittedChanges/invalidatedTables``, without row details.
///
/// The store's own write transactions collect their changes just before committing
/// (``recordHistory(_:author:)``), to write them into the change history in the same
/// transaction; the commit then delivers what was collected. Other connections' commits are
/// read back from that history and delivered through the same handlers
/// (`CommitObserver+External.swift`).
final class CommitObserver: TransactionObserver, @unchecked Sendable {
    typealias Handler = @Sendable (CommittedChanges, Database) -> Void

    // Only touched on the writer's dispatch queue.
    private var pending: [String: CommittedChanges.TableChanges] = [:]
    private var statementColumns: [String: Set<String>] = [:]
    /// Per table of the replaced-row log, per rowid: the deletions the update hook reported.
    private var hookDeletes: [String: [Int64: Int]] = [:]
    /// True once the update hook reported any change of a tracked table.
    private var sawRowEvents = false
    /// Tables whose changes were announced without details (`Database.notifyChanges(in:)`).
    private var invalidatedTables: Set<String> = []
    /// The tables being announced by ``announceChanges(in:_:)``; nil when GRDB's
    /// `notifyChanges(in:)` is called directly (the tables are then unknown).
    private var announcedTables: Set<String>?
    private let columnsByTable: [String: [String]]
    private let replacedRows: ReplacedRowLog
    private let deniedDeletes: DeniedDeleteWatch

    private let handlers = LockedValue<[UInt64: Handler]>([:])
    private let nextKey = LockedValue<UInt64>(0)

    // MARK: History (writer only)

    /// Identifies this store's rows in the change history (random, per store instance).
    let writerID: Int64
    /// Whether ``recordHistory(_:author:)`` writes history rows.
    let recordsHistory: Bool
    /// The changes of the transaction under way, collected by ``recordHistory(_:author:)``
    /// before it commits.
    private var recorded: CommittedChanges?
    /// The author of the transaction under way, when its changes are not recorded.
    private var pendingAuthor: String?
    /// The history position up to which other connections' commits were delivered (or
    /// were this store's own). See `CommitObserver+External.swift`.
    var historyCursor = HistoryToken.beginning
    /// `PRAGMA data_version` of the writer connection at the last check for other
    /// connections' commits.
    var dataVersion: Int64?
    /// The write-ahead log's checkpoints (file stores install it on the writer).
    let checkpoints = WALCheckpoints()

    init(
        columnsByTable: [String: [String]], replacedRows: ReplacedRowLog, deniedDeletes: DeniedDeleteWatch,
        recordsHistory: Bool
    ) {
        self.columnsByTable = columnsByTable
        self.replacedRows = replacedRows
        self.deniedDeletes = deniedDeletes
        self.recordsHistory = recordsHistory
        writerID = Int64.random(in: 1...Int64.max)
    }

    /// The columns of a tracked table.
    func columns(of table: String) -> [String] { columnsByTable[table] ?? [] }

    /// Every table whose changes are reported (entity and join tables).
    var trackedTables: Set<String> { Set(columnsByTable.keys) }

    func add(_ handler: @escaping Handler) -> UInt64 {
        let key = nextKey.withLock { value -> UInt64 in
            value += 1
            return value
        }
        handlers.withLock { $0[key] = handler }
        return key
    }

    func remove(_ key: UInt64) {
        handlers.withLock { $0[key] = nil }
    }

    func isTracked(_ table: String) -> Bool { columnsByTable[table] != nil }

    // MARK: - TransactionObserver

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool {
        // Called for each statement about to run, once per kind of change it (and its
        // triggers) can make: remember which columns updates may write.
        if case .update(let table, let columns) = eventKind, isTracked(table) {
            statementColumns[table, default: []].formUnion(columns)
        }
        return isTracked(eventKind.tableName)
    }

    func databaseDidChange(with event: DatabaseEvent) {
        guard isTracked(event.tableName) else { return }
        let id = event.rowID
        sawRowEvents = true
        if event.kind == .delete, replacedRows.tables.contains(event.tableName) {
            hookDeletes[event.tableName, default: [:]][id, default: 0] += 1
        }
        // Taken out of `pending` while mutated, so that its sets stay uniquely referenced:
        // copying them on every row made a transaction of k row changes O(k²).
        var changes = pending.removeValue(forKey: event.tableName) ?? CommittedChanges.TableChanges()
        switch event.kind {
        case .insert:
            if changes.deleted.remove(id) != nil {
                changes.updated.insert(id)
                changes.updatedColumns.formUnion(columnsByTable[event.tableName] ?? [])
            } else {
                changes.inserted.insert(id)
            }
        case .update:
            if !changes.inserted.contains(id) {
                changes.updated.insert(id)
                if let columns = statementColumns[event.tableName] {
                    changes.updatedColumns.formUnion(columns)
                } else {
                    changes.updatedColumns.formUnion(columnsByTable[event.tableName] ?? [])
                }
            }
        case .delete:
            if changes.inserted.remove(id) == nil {
                changes.updated.remove(id)
                changes.deleted.insert(id)
            }
        }
        pending[event.tableName] = changes
    }

    func databaseDidChange() {
        // Changes GRDB could not see in detail (Database.notifyChanges(in:)): GRDB does not
        // say which tables, so unless the store announced them, every table is invalidated.
        invalidatedTables.formUnion(announcedTables ?? trackedTables)
    }

    /// Announces, in the current transaction, changes of `tables` made outside the store's
    /// connections: the commit reports them in ``CommittedChanges/invalidatedTables``.
    func announceChanges(in tables: Set<String>, _ db: Database) throws {
        for table in tables.sorted() where isTracked(table) {
            announcedTables = [table]
            defer { announcedTables = nil }
            try db.notifyChanges(in: Table(table))
        }
    }

    func databaseWillCommit() throws {}

    /// Collects the net changes of the transaction under way and writes its history row,
    /// inside the transaction, so that both commit together. Called by the store's write
    /// transactions just before they commit; the commit then delivers what was collected.
    func recordHistory(_ db: Database, author: String?) throws {
        guard recordsHistory else {
            pendingAuthor = author
            return
        }
        guard var changes = collect(db), !changes.isEmpty else { return }
        changes.authors = author.map { [$0] } ?? []
        let token = try HistoryTable.record(changes, author: author, writer: writerID, db)
        changes.token = token
        recorded = changes
    }

    func databaseDidCommit(_ db: Database) {
        // With batched controllers' pinned readers, once every handler ran (they moved to
        // this commit); without, right away, where SQLite's own checkpoint would run.
        // (The readers are looked up only when a checkpoint is due, once per ~1,000 pages.)
        let afterHandlers = checkpoints.isDue && checkpoints.followsReaders
        if !afterHandlers { checkpoints.checkpointIfNeeded(db) }
        defer { if afterHandlers { checkpoints.checkpointIfNeeded(db) } }
        var changes = recorded
        recorded = nil
        // Changes made after the history row was written (none through the store), or the
        // whole transaction when it was not recorded.
        if let late = collect(db) {
            if changes == nil {
                changes = late
            } else {
                changes!.merge(late, allColumns: columns(of:))
            }
        }
        guard var changes else { return }
        if let author = pendingAuthor { changes.authors.insert(author) }
        pendingAuthor = nil
        if let token = changes.token, token.rawValue == historyCursor.rawValue + 1 {
            // This store's own commit, right after everything read: nothing to read there.
            historyCursor = token
        }
        guard !changes.isEmpty else { return }
        deliver(changes, db)
    }

    /// Calls every handler with `changes`, on the writer.
    func deliver(_ changes: CommittedChanges, _ db: Database) {
        let current = handlers.withLock { $0.sorted { $0.key < $1.key }.map(\.value) }
        for handler in current { handler(changes, db) }
    }

    /// The net changes of the transaction so far (nil when nothing happened to the tracked
    /// tables), with the replaced-row and join-table logs read, and the collected state
    /// reset.
    private func collect(_ db: Database) -> CommittedChanges? {
        var tables = pending.filter { !$0.value.isEmpty }
        // Every table the update hook reported, net changes or not (a refused cascade can
        // cancel out an insert of the same transaction).
        let touchedTables = Set(pending.keys)
        let hookDeletes = self.hookDeletes, sawRowEvents = self.sawRowEvents
        var invalidatedTables = self.invalidatedTables
        let refused = deniedDeletes.takeUnreportedRefusal()
        reset()
        guard sawRowEvents || !invalidatedTables.isEmpty else { return nil }
        // Read each log when the update hook reported a table it watches, even when nothing
        // is left to report, so that its entries are never read again by a later commit. A
        // log gets entries only from triggers on the tables it watches, whose changes the hook
        // reports (REPLACE deletes rows of the table it writes, which the hook reports): when
        // none was touched, it has nothing new, and the commit saves its query.
        if !replacedRows.tables.isDisjoint(with: touchedTables) {
            replacedRows.merge(into: &tables, hookDeletes: hookDeletes, db)
        }
        if !joinLogTables.isDisjoint(with: touchedTables) { readJoinLog(db, into: &tables) }
        if refused {
            // Some of the reported changes were undone: report the tables, not the rows.
            invalidatedTables.formUnion(touchedTables)
            for table in touchedTables { tables[table] = nil }
        }
        return CommittedChanges(tables: tables, invalidatedTables: invalidatedTables)
    }

    private func reset() {
        pending = [:]
        statementColumns = [:]
        hookDeletes = [:]
        sawRowEvents = false
        invalidatedTables = []
    }

    // MARK: - Join-table log

    /// The highest log entry already delivered (the log's ids are AUTOINCREMENT: never reused).
    private(set) var lastJoinLogID: Int64 = 0
    private var joinLogInstalled = false
    /// The join tables whose rows the log records.
    private var joinLogTables: Set<String> = []

    /// Installs, on the writer connection, TEMP triggers that log the values of inserted
    /// and deleted join-table rows (the update hook only reports their rowids).
    func installJoinLog(_ db: Database, joinTables: [SchemaSQL.JoinTable]) throws {
        try db.execute(sql: """
            CREATE TEMP TABLE IF NOT EXISTS strata_join_log \
            (id INTEGER PRIMARY KEY AUTOINCREMENT, tableName TEXT NOT NULL, rowID INTEGER NOT NULL, \
            a INTEGER, b INTEGER)
            """)
        for join in joinTables {
            let table = quoted(join.name), name = SchemaSQL.literal(join.name.databaseValue)
            let a = quoted(join.column), b = quoted(join.inverseColumn)
            for (event, row) in [("INSERT", "NEW"), ("DELETE", "OLD")] {
                try db.execute(sql: """
                    CREATE TEMP TRIGGER IF NOT EXISTS \(quoted("strata_log_\(event.lowercased())_\(join.name)")) \
                    AFTER \(event) ON main.\(table) BEGIN \
                    INSERT INTO strata_join_log (tableName, rowID, a, b) VALUES (\(name), \(row).rowid, \(row).\(a), \(row).\(b)); END
                    """)
            }
        }
        joinLogTables.formUnion(joinTables.map(\.name))
        joinLogInstalled = true
    }

    /// Removes delivered log entries; called at the start of the store's write transactions.
    func trimJoinLog(_ db: Database) throws {
        guard joinLogInstalled, lastJoinLogID > 0 else { return }
        try db.execute(sql: "DELETE FROM strata_join_log WHERE id <= ?", arguments: [lastJoinLogID])
    }

    private func readJoinLog(_ db: Database, into tables: inout [String: CommittedChanges.TableChanges]) {
        guard joinLogInstalled,
              let rows = try? GRDB.Row.fetchAll(
                db, sql: "SELECT id, tableName, rowID, a, b FROM strata_join_log WHERE id > ? ORDER BY id",
                arguments: [lastJoinLogID])
        else { return }
        for row in rows {
            lastJoinLogID = row["id"]
            let table: String = row["tableName"], rowID: Int64 = row["rowID"]
            guard var changes = tables[table], let columns = columnsByTable[table], columns.count == 2,
                  changes.inserted.contains(rowID) || changes.deleted.contains(rowID),
                  let a = row["a"] as Int64?, let b = row["b"] as Int64?
            else { continue }
            changes.joinRows[rowID] = [columns[0]: a, columns[1]: b]
            tables[table] = changes
        }
    }

    func databaseDidRollback(_ db: Database) {
        _ = deniedDeletes.takeUnreportedRefusal()
        recorded = nil
        pendingAuthor = nil
        reset()
    }
}
