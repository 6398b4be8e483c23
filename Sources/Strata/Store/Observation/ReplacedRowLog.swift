import GRDB

/// Finds the rows that `REPLACE` conflict resolution deletes, which SQLite's update hook
/// (and so ``CommitObserver``) never reports.
///
/// `INSERT OR REPLACE`, `REPLACE INTO` and `UPDATE OR REPLACE` delete the rows that conflict
/// with a unique constraint before writing theirs. The update hook reports the write but not
/// the deletions; delete triggers do fire (the store's connections enable
/// `recursive_triggers`), so the delete rules run and their changes are reported. This log
/// adds the missing deletions: on the writer connection, a TEMP trigger after each delete
/// on every entity table with a unique constraint records the deleted rowid.
///
/// The trigger cannot tell a `REPLACE` deletion from an ordinary one, so it logs both. The
/// observer counts, per rowid, the deletions the update hook reported; each of them cancels
/// one log entry of the same rowid, and what remains are the rows `REPLACE` deleted. Those
/// are merged into the commit: a row the commit does not report, or reports updated while
/// it no longer exists, is deleted; one it reports inserted while it no longer exists was
/// never committed, and is not reported. A row that exists again (a conflict on the id
/// alone writes the same rowid, which the hook reports as an insert) keeps what the hook
/// said.
final class ReplacedRowLog: @unchecked Sendable {
    static let table = "strata_delete_log"

    /// Entity tables with a unique constraint besides the id (`uniques`, or a unique attribute).
    let tables: Set<String>
    /// The highest log entry already read (ids are AUTOINCREMENT: never reused). Writer only.
    private var lastID: Int64 = 0
    /// The highest log entry removed. Writer only.
    private var trimmedID: Int64 = 0
    private var installed = false

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
        installed = true
    }

    /// Removes entries already read; called at the start of the store's write transactions.
    func trim(_ db: Database) throws {
        guard lastID > trimmedID else { return }
        try db.execute(sql: "DELETE FROM \(Self.table) WHERE id <= ?", arguments: [lastID])
        trimmedID = lastID
    }

    /// Reads the log entries of the transaction being committed and merges the rows
    /// `REPLACE` deleted into `tables` (the update hook's net changes, by table).
    ///
    /// - Parameter hookDeletes: per table and rowid, how many deletions the update hook
    ///   reported during the transaction (tables of ``tables`` only).
    func merge(
        into tables: inout [String: CommittedChanges.TableChanges], hookDeletes: [String: [Int64: Int]],
        _ db: Database
    ) {
        guard installed,
              let statement = try? db.cachedStatement(
                sql: "SELECT id, tableName, rowID FROM \(Self.table) WHERE id > ? ORDER BY id"),
              let rows = try? Row.fetchAll(statement, arguments: [lastID])
        else { return }
        // Log entries per (table, rowid), less the deletions the hook reported.
        var replaced: [String: [Int64: Int]] = [:]
        for row in rows {
            lastID = row["id"]
            let table: String = row["tableName"], rowID: Int64 = row["rowID"]
            replaced[table, default: [:]][rowID, default: 0] += 1
        }
        for (table, counts) in replaced {
            let reportedDeletes = hookDeletes[table] ?? [:]
            var changes = tables[table] ?? CommittedChanges.TableChanges()
            for (rowID, count) in counts where count > reportedDeletes[rowID, default: 0] {
                if changes.deleted.contains(rowID) { continue }  // already deleted, net
                if changes.inserted.contains(rowID) || changes.updated.contains(rowID) {
                    // Written by the transaction, then replaced — or replaced, then its rowid
                    // written again: it exists then.
                    let exists = (try? Bool.fetchOne(
                        db, sql: "SELECT EXISTS (SELECT 1 FROM main.\(quoted(table)) WHERE rowid = ?)",
                        arguments: [rowID])) ?? true
                    if exists { continue }
                    if changes.inserted.remove(rowID) != nil { continue }  // net: nothing
                    changes.updated.remove(rowID)
                }
                changes.deleted.insert(rowID)
            }
            tables[table] = changes.isEmpty ? nil : changes
        }
    }
}
