import Foundation
import GRDB

// MARK: - Change history

extension Store {
    /// The position after the last transaction recorded in the file's change history,
    /// by any process: ``changes(since:excludingAuthors:)`` with it returns what is
    /// committed from now on.
    public func historyToken() throws -> HistoryToken {
        try read { db in try historyToken(db) }
    }

    /// ``historyToken()`` as `db` sees the file: inside a transaction of this store (the
    /// `db` of a `read(_:)` or `write(_:)`), the token of the last transaction it sees.
    public func historyToken(_ db: Database) throws -> HistoryToken {
        try HistoryTable.lastToken(db)
    }

    /// The transactions committed after `token`, by this store or any other connection to
    /// the file, in commit order, and the token to read from next time.
    ///
    /// ```swift
    /// var token = loadSavedToken() ?? (try store.historyToken())
    /// let history = try store.changes(since: token, excludingAuthors: ["sync"])
    /// for transaction in history.transactions {
    ///     let notes = transaction.changes.changes(of: Note.self)
    ///     // notes.inserted, notes.updated: read their current values by id;
    ///     // notes.deleted: gone, by id
    /// }
    /// token = history.token
    /// ```
    ///
    /// Each transaction names the rows it inserted, updated (with the columns its updates
    /// could set) and deleted, by table and rowid (the id of an entity), net over the
    /// transaction, changes made by delete rules included — what ``observeCommits(_:)``
    /// delivered for it. Values are not kept: read the rows' current values from the store.
    ///
    /// - Parameters:
    ///   - token: where to start; a token this method or ``historyToken()`` returned.
    ///   - excludingAuthors: transactions by these authors are left out (their changes
    ///     are still behind the returned token).
    /// - Throws: ``HistoryPrunedError`` when the history was pruned past `token`: some
    ///   transactions after it are gone. ``HistoryTokenAheadError`` when `token` is past the
    ///   file's last transaction: the file was replaced by an earlier copy (a backup
    ///   restored) since the token was read, or the token is another file's.
    public func changes(since token: HistoryToken, excludingAuthors: Set<String> = []) throws -> HistoryChanges {
        try read { db in try changes(since: token, excludingAuthors: excludingAuthors, db) }
    }

    /// ``changes(since:excludingAuthors:)`` as `db` sees the file: inside a transaction of
    /// this store (the `db` of a `read(_:)` or `write(_:)`), so that the rows' values read
    /// in the same transaction are exactly those the returned transactions left — no
    /// transaction committed in between is half seen (a sync engine reads what to push this
    /// way, inside the write that records the push).
    public func changes(since token: HistoryToken, excludingAuthors: Set<String> = [], _ db: Database) throws -> HistoryChanges {
        let allTables = observer.trackedTables
        let last = try HistoryTable.lastToken(db)
        if token.rawValue > last.rawValue { throw HistoryTokenAheadError(token: token, currentToken: last) }
        let (entries, pruned) = try HistoryTable.entries(after: token, db)
        if pruned { throw HistoryPrunedError(token: token, currentToken: try HistoryTable.lastToken(db)) }
        var transactions: [HistoryTransaction] = []
        for entry in entries {
            if let author = entry.author, excludingAuthors.contains(author) { continue }
            // A row this version cannot read says that anything may have changed.
            var changes = entry.changes ?? CommittedChanges(invalidatedTables: allTables)
            changes.token = entry.token
            changes.authors = entry.author.map { [$0] } ?? []
            changes.origin = entry.writer == observer.writerID ? .thisStore : .otherConnections
            transactions.append(HistoryTransaction(
                token: entry.token, date: entry.date, author: entry.author, changes: changes))
        }
        return HistoryChanges(transactions: transactions, token: entries.last?.token ?? token)
    }

    /// Removes the history of the transactions up to `token` included — except the newest
    /// transaction's, which is always kept so that tokens are never reused — and returns how
    /// many were removed. Readers that had not read them yet (``changes(since:excludingAuthors:)``
    /// with an older token, a store in another process that is behind) are told that the
    /// history was pruned: ``HistoryPrunedError``, or a delivery with
    /// ``CommittedChanges/missedHistory`` after which controllers refetch once. This store
    /// delivers the other connections' commits it had not delivered yet before pruning.
    ///
    /// Prune up to the oldest token that every reader you know of has read (a sync engine's
    /// last pushed token, say).
    @discardableResult
    public func pruneHistory(through token: HistoryToken) throws -> Int {
        try mapHistoryErrors {
            try writer.writeWithoutTransaction { [observer] db in
                try observer.deliverExternalCommits(db)
                var removed = 0
                try db.inTransaction(.immediate) {
                    removed = try HistoryTable.prune(through: token, db)
                    return .commit
                }
                return removed
            }
        }
    }

    /// Removes the history of the transactions committed before `date`; returns how many
    /// were removed. See ``pruneHistory(through:)``.
    ///
    /// ```swift
    /// try store.pruneHistory(before: Date().addingTimeInterval(-7 * 24 * 3600))   // keep a week
    /// ```
    @discardableResult
    public func pruneHistory(before date: Date) throws -> Int {
        guard let token = try read({ db in try HistoryTable.lastToken(before: date, db) }) else { return 0 }
        return try pruneHistory(through: token)
    }

    /// Delivers now what other connections to the file committed since the last check, to
    /// this store's commit observers and results controllers, as the timer of
    /// ``Options/externalCommitInterval`` does; returns once they have been delivered.
    /// Use it when the timer is off, or when the app learns of a commit by other means (a
    /// notification from an app extension).
    public func checkForExternalCommits() throws {
        try mapHistoryErrors {
            try writer.writeWithoutTransaction { [observer] db in try observer.deliverExternalCommits(db) }
        }
    }

    /// A ``write(_:)-94s9x`` that first hands the commit observers, in its own transaction,
    /// what other connections committed before it: what the observers derived from the
    /// commits is then the state `body` reads and writes. (An edit made from a derived state,
    /// such as a drag in a list, needs that state to be the store's.)
    func writeAfterOtherConnections<T>(_ body: (Database) throws -> T) throws -> T {
        try write { [observer] db in
            try observer.deliverExternalCommits(db)
            return try body(db)
        }
    }

    private func mapHistoryErrors<T>(_ body: () throws -> T) throws -> T {
        try checkOpen()
        do {
            return try body()
        } catch {
            throw typedError(error)
        }
    }
}
