import Foundation
import GRDB
import Testing
@testable import Strata

/// The change history in the store file: what each transaction records, replaying it on an
/// earlier copy of the file, pruning, reopening and migrating; and another connection's
/// commits delivered through it (two stores on one file here; other processes in
/// ``MultiProcessTests``).
@Suite("Change history")
struct ChangeHistoryTests {
    /// Options for stores whose checks for other connections' commits the test makes itself.
    static let manual = Store.Options(externalCommitInterval: nil)

    @Test("each transaction is recorded with its net changes, author and a consecutive token")
    func recordsTransactions() throws {
        let store = try Store.inMemory(schema: NotesModel.schema, options: Store.Options(author: "app"))
        let start = try store.historyToken()
        #expect(start == .beginning)
        let recorder = CommitRecorder(store)
        let (work, note) = try store.write(author: "sync") { db in
            let work = try db.notebook("Work")
            return (work, try db.note("a", in: work))
        }
        var renamed = note
        renamed.title = "b"
        try store.update(renamed)
        try store.write { db in try db.execute(sql: "DELETE FROM Notebook") }   // the note cascades
        try store.write { db in try db.execute(sql: "UPDATE Notebook SET position = 1 WHERE 0") }   // nothing

        let history = try store.changes(since: start)
        #expect(history.transactions.map(\.token.rawValue) == [1, 2, 3])
        #expect(history.token == HistoryToken(rawValue: 3))
        let current = try store.historyToken()
        #expect(current == history.token)
        #expect(history.transactions.map(\.author) == ["sync", "app", "app"])
        let (first, second, third) = (history.transactions[0].changes, history.transactions[1].changes, history.transactions[2].changes)
        #expect(first["Notebook"].inserted == [work.id.rawValue] && first["Note"].inserted == [note.id.rawValue])
        #expect(second["Note"].updated == [note.id.rawValue] && second["Note"].updatedColumns == ["title"])
        #expect(third["Notebook"].deleted == [work.id.rawValue] && third["Note"].deleted == [note.id.rawValue])
        // What commit observers got is what the history holds.
        #expect(recorder.commits == history.transactions.map(\.changes))
        #expect(recorder.commits.map(\.origin) == [.thisStore, .thisStore, .thisStore])
        #expect(recorder.commits.map(\.authors) == [["sync"], ["app"], ["app"]])

        // Excluded authors are left out, and still behind the token.
        let unsynced = try store.changes(since: start, excludingAuthors: ["sync"])
        #expect(unsynced.transactions.map(\.token.rawValue) == [2, 3] && unsynced.token == history.token)
        #expect(try store.changes(since: history.token) == HistoryChanges(transactions: [], token: history.token))
        #expect(try JSONDecoder().decode(HistoryToken.self, from: JSONEncoder().encode(history.token)) == history.token)
    }

    @Test("a store with recordsHistory off records nothing, and still reports its commits")
    func historyOff() throws {
        let store = try Store.inMemory(schema: NotesModel.schema, options: Store.Options(recordsHistory: false))
        let recorder = CommitRecorder(store)
        try store.write(author: "x") { db in try db.notebook("Work") }
        #expect(try store.changes(since: .beginning).transactions.isEmpty)
        #expect(recorder.commits.count == 1 && recorder.commits[0].token == nil && recorder.commits[0].authors == ["x"])
    }

    @Test("the encoding round-trips any changes", arguments: [UInt64(1), 2, 3, 4])
    func encodingRoundTrips(seed: UInt64) throws {
        var random = StoreRandom(seed: seed)
        for _ in 0..<50 {
            var changes = CommittedChanges()
            for _ in 0..<4 where Bool.random(using: &random) {
                var table = CommittedChanges.TableChanges()
                let ids = { (random: inout StoreRandom) in
                    Set((0..<Int.random(in: 0..<20, using: &random)).map { _ in Int64.random(in: -5...Int64.max, using: &random) })
                }
                table.inserted = ids(&random)
                table.updated = ids(&random)
                table.deleted = ids(&random)
                table.updatedColumns = Set(["title", "body", "pinned"].filter { _ in Bool.random(using: &random) })
                for id in table.inserted.prefix(3) { table.joinRows[id] = ["noteID": .random(in: 0...99, using: &random), "tagID": -1] }
                changes.tables["t\(changes.tables.count)"] = table
            }
            if Bool.random(using: &random) { changes.invalidatedTables = ["Tag"] }
            let data = HistoryCoding.encode(changes)
            #expect(HistoryCoding.decode(data) == changes.withoutEmptyTables)
            #expect(HistoryCoding.decode(data.dropLast()) == nil || data.isEmpty)
        }
        #expect(HistoryCoding.decode(Data([2, 0, 0])) == nil)   // an unknown version
    }

    @Test("the changes since a token, replayed on a copy of the file at that token, reproduce the database", arguments: [UInt64(7), 8, 9])
    func replayReproducesTheDatabase(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let directory = try TemporaryDirectory()
        let store = try Store(schema: NotesModel.schema, path: directory.path("live.sqlite"), options: Self.manual)
        let titles = ["a", "b", "c", "x"]
        var counter = 0
        for _ in 0..<25 {
            try ResultsPropertyTests.randomCommit(
                store, writes: Int.random(in: 1...4, using: &random), kinds: 0..<15, titles: titles,
                counter: &counter, random: &random)
        }
        let copyPath = directory.path("copy.sqlite")
        let token = try store.writer.writeWithoutTransaction { db in
            try db.execute(sql: "VACUUM INTO ?", arguments: [copyPath])
            return try HistoryTable.lastToken(db)
        }
        for _ in 0..<40 {
            try ResultsPropertyTests.randomCommit(
                store, writes: Int.random(in: 1...4, using: &random), kinds: 0..<15, titles: titles,
                counter: &counter, random: &random)
        }
        let history = try store.changes(since: token)
        #expect(history.transactions.count >= 30)

        // Replay, transaction by transaction, with the values the rows have now.
        let copy = try DatabaseQueue(path: copyPath)
        try copy.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA foreign_keys = OFF")
            for name in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'trigger'") {
                try db.execute(sql: "DROP TRIGGER \(quoted(name))")
            }
        }
        let tables = ["Notebook", "Note", "Tag", "Note_tags"]
        try store.read { source in
            try copy.write { db in
                for transaction in history.transactions {
                    #expect(transaction.changes.invalidatedTables.isEmpty)
                    for (table, changes) in transaction.changes.tables {
                        #expect(tables.contains(table))
                        for id in changes.deleted {
                            try db.execute(sql: "DELETE FROM \(quoted(table)) WHERE rowid = ?", arguments: [id])
                        }
                        for id in changes.inserted.union(changes.updated) {
                            guard let row = try GRDB.Row.fetchOne(
                                source, sql: "SELECT rowid AS strata_rowid, * FROM \(quoted(table)) WHERE rowid = ?", arguments: [id])
                            else { continue }   // deleted by a later transaction
                            let columns = row.columnNames.filter { $0 != "strata_rowid" }
                            try db.execute(
                                sql: "INSERT OR REPLACE INTO \(quoted(table)) (rowid, \(columns.map(quoted).joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: columns.count + 1).joined(separator: ", ")))",
                                arguments: StatementArguments(row.databaseValues))
                        }
                    }
                }
            }
        }
        for table in tables {
            let sql = "SELECT rowid, * FROM \(quoted(table)) ORDER BY rowid"
            let expected = try store.read { db in try GRDB.Row.fetchAll(db, sql: sql) }
            let replayed = try copy.read { db in try GRDB.Row.fetchAll(db, sql: sql) }
            #expect(replayed == expected, "\(table), seed \(seed)")
        }
    }

    @Test("history survives reopening and a lightweight migration, which records itself")
    func survivesReopenAndMigration() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        var store = try Store(schema: NotesModel.schema, path: path, options: Self.manual)
        try store.write { db in try db.notebook("Work") }
        try store.write { db in try db.note("a") }
        try store.close()

        store = try Store(schema: NotesModel.schema, path: path, options: Self.manual)
        #expect(try store.changes(since: .beginning).transactions.map(\.token.rawValue) == [1, 2])
        try store.write { db in try db.note("b") }
        try store.close()

        store = try Store(schema: Self.notesWithSubtitle, path: path, options: Self.manual)
        let history = try store.changes(since: .beginning)
        #expect(history.transactions.map(\.token.rawValue) == [1, 2, 3, 4])
        let migration = try #require(history.transactions.last)
        #expect(migration.author == "strata.migration")
        #expect(migration.changes.invalidatedTables == ["Notebook", "Note", "Tag", "Note_tags"])
        #expect(history.transactions[2].changes["Note"].inserted.count == 1)
        try store.write { db in try db.execute(sql: "UPDATE Note SET subtitle = 's'") }
        #expect(try store.changes(since: history.token).transactions.first?.changes["Note"].updatedColumns == ["subtitle"])
    }

    /// The fixture model with an optional attribute added to `Note`.
    static var notesWithSubtitle: SchemaDescriptor {
        var schema = NotesModel.schema
        let index = schema.entities.firstIndex { $0.name == "Note" }!
        schema.entities[index].attributes.append(AttributeDescriptor(name: "subtitle", type: .string, isOptional: true))
        return schema
    }

    @Test("a token past the file's history (the file restored from an earlier copy) throws, never reads as 'nothing new'")
    func tokenAheadOfTheFile() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite"), backup = directory.path("backup.sqlite")
        var store = try Store(schema: NotesModel.schema, path: path, options: Self.manual)
        for index in 0..<3 { try store.write { db in try db.note("n\(index)") } }
        try store.close()
        try FileManager.default.copyItem(atPath: path, toPath: backup)
        store = try Store(schema: NotesModel.schema, path: path, options: Self.manual)
        for index in 3..<5 { try store.write { db in try db.note("n\(index)") } }
        let saved = try store.historyToken()
        #expect(saved.rawValue == 5)
        try store.close()
        // The backup comes back: its history ends at 3.
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.copyItem(atPath: backup, toPath: path)
        store = try Store(schema: NotesModel.schema, path: path, options: Self.manual)
        #expect(throws: HistoryTokenAheadError(token: saved, currentToken: HistoryToken(rawValue: 3))) {
            try store.changes(since: saved)
        }
        #expect(try store.changes(since: HistoryToken(rawValue: 3)).transactions.isEmpty)
        #expect(try store.changes(since: HistoryToken(rawValue: 2)).transactions.map(\.token.rawValue) == [3])
        // The next transaction takes the number 4 again: the saved token could not tell.
        try store.write { db in try db.note("after the restore") }
        #expect(try store.historyToken().rawValue == 4)
        #expect(throws: HistoryTokenAheadError.self) { try store.changes(since: saved) }
        // A new file has no history: any token but the beginning is ahead of it.
        let fresh = try Store.inMemory(schema: NotesModel.schema)
        #expect(throws: HistoryTokenAheadError(token: HistoryToken(rawValue: 1), currentToken: .beginning)) {
            try fresh.changes(since: HistoryToken(rawValue: 1))
        }
        #expect(HistoryTokenAheadError(token: saved, currentToken: .beginning).description.contains("past this file's last transaction"))
    }

    @Test("pruning: by token and by date; reading past the pruned history throws")
    func pruning() throws {
        let directory = try TemporaryDirectory()
        let store = try Store(schema: NotesModel.schema, path: directory.path("notes.sqlite"), options: Self.manual)
        for index in 0..<5 { try store.write { db in try db.note("n\(index)") } }
        #expect(try store.pruneHistory(through: HistoryToken(rawValue: 2)) == 2)
        #expect(try store.changes(since: HistoryToken(rawValue: 2)).transactions.map(\.token.rawValue) == [3, 4, 5])
        #expect(throws: HistoryPrunedError(token: HistoryToken(rawValue: 1), currentToken: HistoryToken(rawValue: 5))) {
            try store.changes(since: HistoryToken(rawValue: 1))
        }
        #expect(try store.pruneHistory(before: Date().addingTimeInterval(-3600)) == 0)
        // Everything before now: the newest row stays, so that tokens are never reused.
        #expect(try store.pruneHistory(before: Date().addingTimeInterval(3600)) == 2)
        #expect(try store.changes(since: HistoryToken(rawValue: 4)).transactions.map(\.token.rawValue) == [5])
        #expect(throws: HistoryPrunedError.self) { try store.changes(since: HistoryToken(rawValue: 3)) }
        try store.write { db in try db.note("after") }
        #expect(try store.changes(since: HistoryToken(rawValue: 5)).transactions.map(\.token.rawValue) == [6])
    }

    // MARK: - Another connection

    @Test("another store's commits reach this store's controllers, incrementally, and its own are not delivered twice", arguments: [UInt64(31), 32])
    func anotherConnection(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let directory = try TemporaryDirectory()
        let path = directory.path("shared.sqlite")
        let reader = try Store(schema: NotesModel.schema, path: path, options: Self.manual)
        let writer = try Store(schema: NotesModel.schema, path: path, options: Self.manual)
        let trace = reader.traceStatements()
        let harness = try Harness(store: reader, Note.Fetches.byNotebook)
        let reads = try ItemReads(lastFullFetchIn: trace.statements)
        trace.removeAll()
        let recorder = CommitRecorder(reader)
        var counter = 0
        for step in 0..<30 {
            // Both write; the reader's commits are delivered at once, the other's when it checks.
            if step % 3 == 0 {
                try ResultsPropertyTests.randomCommit(
                    reader, writes: 1, kinds: 0..<11, titles: ["a", "b"], counter: &counter, random: &random)
            }
            try ResultsPropertyTests.randomCommit(
                writer, writes: Int.random(in: 1...3, using: &random), kinds: 0..<15, titles: ["a", "b", "c"],
                counter: &counter, random: &random)
            if Bool.random(using: &random) { try reader.checkForExternalCommits() }
        }
        try reader.checkForExternalCommits()
        #expect(reads.fullFetches(in: trace.statements) == 0)
        try harness.check()
        let commits = recorder.commits
        let own = commits.filter { $0.origin == .thisStore }.compactMap(\.token)
        let external = commits.filter { $0.origin == .otherConnections }
        #expect(own.count > 5 && Set(own).count == own.count)
        #expect(!external.isEmpty && external.allSatisfy { !$0.missedHistory })
        // Every transaction of the other store is behind the last delivered token.
        #expect(commits.compactMap(\.token).max() == (try reader.historyToken()))
    }

    @Test("a transaction on the writer outside write(_:) is delivered here but not recorded; notifyExternalChanges is recorded")
    func unrecordedWrites() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("shared.sqlite")
        let reader = try Store(schema: NotesModel.schema, path: path, options: Self.manual)
        let writer = try Store(schema: NotesModel.schema, path: path, options: Self.manual)
        let writerCommits = CommitRecorder(writer), readerCommits = CommitRecorder(reader)
        _ = try writer.writer.write { db in try db.note("raw") }
        #expect(writerCommits.commits.count == 1 && writerCommits.commits[0].token == nil)
        #expect(try writer.changes(since: .beginning).transactions.isEmpty)
        try reader.checkForExternalCommits()
        #expect(readerCommits.commits.isEmpty)
        // Announced, and recorded: the other store is told to re-read the table.
        try writer.notifyExternalChanges(in: ["Note"])
        #expect(try writer.changes(since: .beginning).transactions.map(\.changes.invalidatedTables) == [["Note"]])
        try reader.checkForExternalCommits()
        #expect(readerCommits.commits.map(\.invalidatedTables) == [["Note"]])
        #expect(readerCommits.commits.map(\.origin) == [.otherConnections])
    }

    @Test("history pruned past a store that is behind: it refetches once and says so")
    func prunedWhileBehind() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("shared.sqlite")
        let reader = try Store(schema: NotesModel.schema, path: path, options: Self.manual)
        let writer = try Store(schema: NotesModel.schema, path: path, options: Self.manual)
        let trace = reader.traceStatements()
        let harness = try Harness(store: reader, Note.Fetches.byNotebook)
        let reads = try ItemReads(lastFullFetchIn: trace.statements)
        trace.removeAll()
        let recorder = CommitRecorder(reader)
        for index in 0..<5 { try writer.write { db in try db.note("n\(index)") } }
        try writer.pruneHistory(through: try writer.historyToken())
        try writer.write { db in try db.note("later") }
        try reader.checkForExternalCommits()
        #expect(recorder.commits.map(\.missedHistory) == [true])
        #expect(reads.fullFetches(in: trace.statements) == 1)
        try harness.check()
        // Then incremental again.
        trace.removeAll()
        try writer.write { db in try db.note("again") }
        try reader.checkForExternalCommits()
        #expect(recorder.commits.map(\.missedHistory) == [true, false])
        #expect(reads.fullFetches(in: trace.statements) == 0 && reads.rowReads(in: trace.statements).count == 1)
        try harness.check()
    }
}

extension CommittedChanges {
    /// The same changes without the tables that have none (the encoding leaves them out).
    var withoutEmptyTables: CommittedChanges {
        var copy = self
        copy.tables = tables.filter { !$0.value.isEmpty }
        return copy
    }
}
