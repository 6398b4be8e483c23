import GRDB

/// Finds the rows that `REPLACE` conflict resolution deletes, which SQLite's update hook
/// (and so ``CommitObserver``) never reports.
///
/// `INSERT OR REPLACE`, `REPLACE INTO` and `UPDATE OR REPLACE` delete the rows that conflict
/// with a unique constraint before writing theirs. The update hook reports the write but not
/// the deletions; delete triggers do fire (the store's connections enable
/// `recursive_triggers`), so the delete rules run and their changes are reported. This log
/// adds the missing deletions: on the writer connection, a TEMP trigger after each delete
/// on every entity table with a unique constraint records the deleted rowid (a conflict on
/// the id alone writes the same rowid again, which the hook reports as that row's insert).
///
/// The store merges the log into every commit it reports: a logged row that the commit does
/// not report, or reports updated while it no longer exists, is deleted; one it reports
/// inserted while it no longer exists was never committed, and is not reported.
final class ReplacedRowLog: @unchecked Sendable {
    static let table = "strata_delete_log"

    /// Entity tables with a unique constraint besides the id (`uniques`, or a unique attribute).
    let tables: Set<String>
    /// The highest log entry already read (ids are AUTOINCREMENT: never reused). Writer only.
    private var lastID: Int64 = 0
    /// The highest log entry removed. Writer only.
    private var trimmedID: Int64 = 0
    /// Rowids deleted by the commit being delivered, by table; set by the store's first
    /// commit handler, read by the others, all on the writer.
    private let current = LockedValue(Gone())

    /// What the log adds to a commit, by table.
    struct Gone {
        /// Rows that existed before the transaction.
        var deleted: [String: Set<Int64>] = [:]
        /// Rows the transaction inserted, then replaced.
        var neverCommitted: [String: Set<Int64>] = [:]
    }

    init(schema: SchemaDescriptor) {
        tables = Set(
            schema.entities.filter { !$0.uniques.isEmpty || $0.attributes.contains(where: \.isUnique) }.map(\.name))
    }

    /// Creates the log table and its triggers on the writer connection.
    func install(_ db: Database) throws {
        guard !tables.isEmpty else { return }
        try db.execute(sql: """
            CREATE TEMP TABLE IF NOT EXISTS \(Self.table) \
            (id INTEGER PRIMARY KEY AUTOINCREMENT, tableName TEXT NOT NULL, rowID INTEGER NOT NULL)
            """)
        for table in tables.sorted() {
            try db.execute(sql: """
                CREATE TEMP TRIGGER IF NOT EXISTS \(quoted("strata_log_replace_\(table)")) \
                AFTER DELETE ON main.\(quoted(table)) BEGIN \
                INSERT INTO \(Self.table) (tableName, rowID) VALUES (\(SchemaSQL.literal(table.databaseValue)), OLD.rowid); END
                """)
        }
    }

    /// Removes entries already read; called at the start of the store's write transactions.
    func trim(_ db: Database) throws {
        guard lastID > trimmedID else { return }
        try db.execute(sql: "DELETE FROM \(Self.table) WHERE id <= ?", arguments: [lastID])
        trimmedID = lastID
    }

    /// Reads the deletions of the commit being delivered (the store's first commit handler).
    func read(_ changes: CommittedChanges, _ db: Database) {
        // Read whatever the commit reports: the row a REPLACE wrote may be gone by the
        // commit (deleted later in the transaction), leaving its table unreported.
        guard !tables.isEmpty,
              let statement = try? db.cachedStatement(
                sql: "SELECT id, tableName, rowID FROM \(Self.table) WHERE id > ? ORDER BY id"),
              let rows = try? Row.fetchAll(statement, arguments: [lastID])
        else {
            current.withLock { $0 = Gone() }
            return
        }
        var gone = Gone()
        for row in rows {
            lastID = row["id"]
            let table: String = row["tableName"], rowID: Int64 = row["rowID"]
            let reported = changes[table]
            if reported.deleted.contains(rowID) { continue }  // reported by the hook
            if reported.inserted.contains(rowID) || reported.updated.contains(rowID) {
                // Written by the transaction, then replaced (deleted) — or deleted, then its
                // rowid written again: it exists then.
                let exists = (try? Bool.fetchOne(
                    db, sql: "SELECT EXISTS (SELECT 1 FROM main.\(quoted(table)) WHERE rowid = ?)",
                    arguments: [rowID])) ?? true
                if exists { continue }
                if reported.inserted.contains(rowID) {
                    gone.neverCommitted[table, default: []].insert(rowID)  // net: nothing
                    continue
                }
            }
            gone.deleted[table, default: []].insert(rowID)
        }
        current.withLock { $0 = gone }
    }

    /// `changes` with the deletions read for this commit.
    func merged(_ changes: CommittedChanges) -> CommittedChanges {
        let gone = current.withLock { $0 }
        guard !gone.deleted.isEmpty || !gone.neverCommitted.isEmpty else { return changes }
        var result = changes
        for (table, ids) in gone.deleted {
            var tableChanges = result[table]
            tableChanges.updated.subtract(ids)
            tableChanges.deleted.formUnion(ids)
            result.tables[table] = tableChanges
        }
        for (table, ids) in gone.neverCommitted {
            var tableChanges = result[table]
            tableChanges.inserted.subtract(ids)
            result.tables[table] = tableChanges.isEmpty ? nil : tableChanges
        }
        return result
    }
}
