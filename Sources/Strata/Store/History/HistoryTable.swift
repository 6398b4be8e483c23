import Foundation
import GRDB

/// The change history in the store file: one row per recorded transaction.
///
/// ```sql
/// CREATE TABLE strata_history (
///     token INTEGER PRIMARY KEY,   -- HistoryToken: commit order, consecutive
///     date REAL NOT NULL,          -- seconds since 1970
///     author TEXT,                 -- Store.write(author:) or Options.author
///     writer INTEGER NOT NULL,     -- the committing store instance (0: a migration)
///     changes BLOB NOT NULL        -- HistoryCoding of the net CommittedChanges
/// )
/// ```
///
/// Rows are written by the committing transaction itself, just before it commits, so a
/// transaction and its history row are committed (or lost) together. SQLite serialises
/// writers, and a new row takes the largest token plus one inside the transaction, so the
/// tokens of committed transactions are consecutive. Pruning never removes the newest row,
/// so the largest token never goes down and tokens are never reused (`AUTOINCREMENT` would
/// guarantee the same at the cost of one more page written per commit, in
/// `sqlite_sequence`). A reader that finds a gap after the token it had read knows that the
/// history was pruned past it.
enum HistoryTable {
    static let name = "strata_history"

    static let createSQL = """
        CREATE TABLE IF NOT EXISTS \(name) (token INTEGER PRIMARY KEY, date REAL NOT NULL, \
        author TEXT, writer INTEGER NOT NULL, changes BLOB NOT NULL)
        """

    /// The author of the history rows that migrations write.
    static let migrationAuthor = "strata.migration"

    /// One row, decoded.
    struct Entry {
        var token: HistoryToken
        var date: Date
        var author: String?
        var writer: Int64
        /// Nil when the row was not decoded (a row of the reading store) or does not decode.
        var changes: CommittedChanges?
        var isDecodable: Bool
    }

    static func exists(_ db: Database) throws -> Bool { try db.tableExists(name) }

    /// Writes the history row of the transaction under way; returns its token.
    static func record(_ changes: CommittedChanges, author: String?, writer: Int64, _ db: Database) throws -> HistoryToken {
        let statement = try db.cachedStatement(
            sql: "INSERT INTO \(name) (date, author, writer, changes) VALUES (?, ?, ?, ?)")
        try statement.execute(arguments: [
            Date().timeIntervalSince1970, author, writer, HistoryCoding.encode(changes),
        ])
        return HistoryToken(rawValue: db.lastInsertedRowID)
    }

    /// The token of the last transaction recorded (the newest row is never pruned);
    /// ``HistoryToken/beginning`` when none was.
    static func lastToken(_ db: Database) throws -> HistoryToken {
        guard try exists(db) else { return .beginning }
        return HistoryToken(rawValue: try Int64.fetchOne(db, sql: "SELECT MAX(token) FROM main.\(name)") ?? 0)
    }

    /// The rows after `token`, in order, and whether the history was pruned past it. The
    /// changes of rows written by `skippedWriter` are not read.
    static func entries(
        after token: HistoryToken, skippingChangesOf skippedWriter: Int64? = nil, _ db: Database
    ) throws -> (entries: [Entry], pruned: Bool) {
        guard try exists(db) else { return ([], false) }
        let statement = try db.cachedStatement(sql: """
            SELECT token, date, author, writer, CASE WHEN writer IS ? THEN NULL ELSE changes END \
            FROM main.\(name) WHERE token > ? ORDER BY token
            """)
        var entries: [Entry] = []
        let rows = try Row.fetchCursor(statement, arguments: [skippedWriter, token.rawValue])
        while let row = try rows.next() {
            let writer: Int64 = row[3]
            var changes: CommittedChanges?
            var decodable = true
            if writer != skippedWriter {
                let blob: Data? = row[4]
                changes = blob.flatMap(HistoryCoding.decode)
                decodable = changes != nil
            }
            entries.append(Entry(
                token: HistoryToken(rawValue: row[0]), date: Date(timeIntervalSince1970: row[1]), author: row[2],
                writer: writer, changes: changes, isDecodable: decodable))
        }
        // The newest row is never pruned: rows after the token, if any, start right after it.
        let pruned = entries.first.map { $0.token.rawValue > token.rawValue + 1 } ?? false
        return (entries, pruned)
    }

    /// Removes the rows up to `token` included, except the newest; returns how many.
    @discardableResult
    static func prune(through token: HistoryToken, _ db: Database) throws -> Int {
        guard try exists(db) else { return 0 }
        try db.execute(
            sql: "DELETE FROM main.\(name) WHERE token <= ? AND token < (SELECT MAX(token) FROM main.\(name))",
            arguments: [token.rawValue])
        return db.changesCount
    }

    /// The token of the last row committed before `date`; nil when there is none.
    static func lastToken(before date: Date, _ db: Database) throws -> HistoryToken? {
        guard try exists(db) else { return nil }
        return try Int64.fetchOne(
            db, sql: "SELECT MAX(token) FROM \(name) WHERE date < ?", arguments: [date.timeIntervalSince1970]
        ).map(HistoryToken.init(rawValue:))
    }
}
