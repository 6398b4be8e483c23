import Foundation
import GRDB

// MARK: - Commits of other connections

/// Other connections' commits (other processes, other stores on the same file) are invisible
/// to SQLite's update hook. The store learns of them from `PRAGMA data_version`, which
/// changes on the writer connection exactly when another connection committed, and learns
/// what they changed from the change history, which every recording store writes in the
/// same transaction as its changes.
extension CommitObserver {
    /// Starts the history cursor at the file's current position. On the writer.
    func startReadingHistory(_ db: Database) throws {
        historyCursor = try HistoryTable.lastToken(db)
        dataVersion = try Int64.fetchOne(db, sql: "PRAGMA data_version")
    }

    /// Delivers, as one ``CommittedChanges`` of origin ``CommittedChanges/Origin/otherConnections``,
    /// what other connections committed since the last call, read from the history. On the
    /// writer; when it is not in a transaction, the history and the rows that handlers re-read
    /// are read in one read transaction, so that they see one state. Unless `force`, does
    /// nothing when no other connection committed since the last call.
    func deliverExternalCommits(_ db: Database, force: Bool = false) throws {
        let version = try Int64.fetchOne(db, sql: "PRAGMA data_version")
        if !force && version == dataVersion { return }
        if db.isInsideTransaction {
            try deliverExternalCommitsInTransaction(db)
        } else {
            try db.inTransaction(.deferred) {
                try deliverExternalCommitsInTransaction(db)
                return .commit
            }
        }
        dataVersion = version
    }

    private func deliverExternalCommitsInTransaction(_ db: Database) throws {
        let (entries, pruned) = try HistoryTable.entries(after: historyCursor, skippingChangesOf: writerID, db)
        guard let last = try entries.last?.token ?? (pruned ? HistoryTable.lastToken(db) : nil) else { return }
        var changes = CommittedChanges()
        changes.origin = .otherConnections
        if pruned {
            // Transactions after the cursor are gone: anything may have changed.
            changes.missedHistory = true
            changes.invalidatedTables = trackedTables
        }
        for entry in entries where entry.writer != writerID {
            guard var transaction = entry.changes else {
                // A row this version of Strata cannot read: anything may have changed.
                changes.invalidatedTables = trackedTables
                continue
            }
            transaction.token = entry.token
            transaction.authors = entry.author.map { [$0] } ?? []
            changes.merge(transaction, allColumns: columns(of:), keepingInsertedThenDeleted: true)
        }
        historyCursor = last
        changes.token = last
        // Tables this store does not know (another model version's) are left out.
        changes.tables = changes.tables.filter { isTracked($0.key) }
        changes.invalidatedTables = changes.invalidatedTables.filter(isTracked)
        try reviveExistingRows(&changes, db)
        guard !changes.isEmpty else { return }
        deliver(changes, db)
    }

    /// Rows reported deleted that exist in the state read: a later commit, of this store,
    /// that was already delivered, wrote the rowid again. They are reported updated, with
    /// every column, so that whoever re-reads the rows finds them.
    private func reviveExistingRows(_ changes: inout CommittedChanges, _ db: Database) throws {
        for (name, table) in changes.tables where !table.deleted.isEmpty {
            var existing: Set<Int64> = []
            let deleted = table.deleted.sorted()
            for start in stride(from: 0, to: deleted.count, by: 500) {
                let list = deleted[start..<min(start + 500, deleted.count)].map(String.init).joined(separator: ",")
                existing.formUnion(try Int64.fetchAll(
                    db, sql: "SELECT rowid FROM main.\(quoted(name)) WHERE rowid IN (\(list))"))
            }
            if existing.isEmpty { continue }
            var revised = table
            revised.deleted.subtract(existing)
            revised.updated.formUnion(existing)
            revised.updatedColumns.formUnion(columns(of: name))
            changes.tables[name] = revised
        }
    }
}
