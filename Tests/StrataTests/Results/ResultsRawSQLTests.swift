import Dispatch
import Foundation
import GRDB
import Testing

@testable import Strata

/// Writes in raw SQL whose row changes SQLite's update hook does not report in full.
@Suite struct ResultsRawSQLTests {
    /// `INSERT OR REPLACE` on a unique column deletes the conflicting row, which the update
    /// hook never reports; its section (and its cascaded notes) must still go.
    @Test func insertOrReplaceOnAUniqueColumnDeletesTheReplacedRow() throws {
        let h = try Harness(Note.Fetches.byNotebook) { db in
            let work = try db.notebook("Work", position: 0)
            try db.notebook("Home", position: 1)
            try db.note("a", in: work)
        }
        try h.write { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO Notebook (name, createdAt, position) VALUES ('Work', ?, 2)",
                arguments: [day])
        }
        #expect(
            lines(h.recorder.updates, text) == [
                "reload | Work[a] Home[]",
                "s-[0] s+[1] | Home[] Work[]",
            ])
        try h.check()
    }

    /// `UPDATE OR REPLACE` that takes another row's unique value deletes that row.
    @Test func updateOrReplaceOnAUniqueColumnDeletesTheOtherRow() throws {
        let h = try Harness(Note.Fetches.byNotebook) { db in
            try db.notebook("Work", position: 0)
            let home = try db.notebook("Home", position: 1)
            try db.note("h", in: home)
        }
        try h.write { db in
            try db.execute(sql: "UPDATE OR REPLACE Notebook SET name = 'Home' WHERE name = 'Work'")
        }
        #expect(
            lines(h.recorder.updates, text) == [
                "reload | Work[] Home[h]",
                "s-[1] s~[0] | Home[]",
            ])
        try h.check()
    }

    /// The store's committed changes report the replaced row as deleted.
    @Test func committedChangesReportReplacedRows() throws {
        let store = try Store.inMemory(schema: NotesModel.schema)
        let work = try store.write { db in try db.notebook("Work") }
        let commits = LockedValue<[CommittedChanges]>([])
        let observation = store.observeCommits { changes in commits.withLock { $0.append(changes) } }
        defer { observation.cancel() }
        try store.write { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO Notebook (name, createdAt, position) VALUES ('Work', ?, 2)",
                arguments: [day])
        }
        let commit = try #require(commits.withLock { $0 }.first)
        #expect(commit["Notebook"].deleted == [work.id.rawValue])
        #expect(commit["Notebook"].inserted == [work.id.rawValue + 1])
        #expect(commit["Notebook"].updated.isEmpty)
    }

    /// A unique attribute (not an entity-level `uniques` entry) is a conflict target too.
    @Test func replaceOnAUniqueAttributeIsReported() throws {
        let schema = SchemaDescriptor(
            name: "Codes", entities: [EntityDescriptor(name: "Item", attributes: [.init(name: "code", type: .string, isUnique: true)])])
        let store = try Store.inMemory(schema: schema)
        try store.write { db in try db.execute(sql: "INSERT INTO Item (code) VALUES ('a'), ('b')") }
        let commits = LockedValue<[CommittedChanges]>([])
        let observation = store.observeCommits { changes in commits.withLock { $0.append(changes) } }
        defer { observation.cancel() }
        try store.write { db in try db.execute(sql: "REPLACE INTO Item (code) VALUES ('a')") }
        try store.write { db in try db.execute(sql: "UPDATE OR REPLACE Item SET code = 'b' WHERE code = 'a'") }
        let changes = commits.withLock { $0 }.map { $0["Item"] }
        #expect(changes.map(\.inserted) == [[3], []])
        #expect(changes.map(\.deleted) == [[1], [2]])
        #expect(changes.map(\.updated) == [[], [3]])
    }

    /// A notebook inserted and replaced in one transaction: nothing of it is reported.
    @Test func rowInsertedAndReplacedInOneTransactionIsNotReported() throws {
        let store = try Store.inMemory(schema: NotesModel.schema)
        let commits = LockedValue<[CommittedChanges]>([])
        let observation = store.observeCommits { changes in commits.withLock { $0.append(changes) } }
        defer { observation.cancel() }
        let h = try Harness(store: store, Note.Fetches.byNotebook)
        try h.write { db in
            let first = try db.notebook("Work")
            try db.execute(
                sql: "INSERT OR REPLACE INTO Notebook (name, createdAt, position) VALUES ('Work', ?, 2)",
                arguments: [day])
            #expect(try Notebook.fetchAll(db).map(\.id) == [Notebook.ID(rawValue: first.id.rawValue + 1)])
        }
        #expect(commits.withLock { $0 }.map { $0["Notebook"].inserted } == [[2]])
        #expect(commits.withLock { $0 }.map { $0["Notebook"].deleted } == [[]])
        #expect(lines(h.recorder.updates, text) == ["reload | ", "s+[0] | Work[]"])
        try h.check()
    }

    /// A notebook replaced, then the replacing row deleted, in one transaction: the notebook
    /// table's net changes come from the log alone.
    @Test func replacedRowWhoseReplacementIsDeletedToo() throws {
        let h = try Harness(Note.Fetches.byNotebook) { db in
            let work = try db.notebook("Work")
            try db.note("a", in: work)
        }
        try h.write { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO Notebook (name, createdAt, position) VALUES ('Work', ?, 2)",
                arguments: [day])
            try db.execute(sql: "DELETE FROM Notebook WHERE name = 'Work'")
        }
        #expect(lines(h.recorder.updates, text) == ["reload | Work[a]", "s-[0] | "])
        try h.check()
    }

    /// A notebook without notes replaced, then the replacing row deleted: the update hook
    /// reports no net change at all (insert and delete of the same new row); the commit
    /// comes from the replaced-row log alone.
    @Test func replacedRowWithNothingElseReported() throws {
        let h = try Harness(Note.Fetches.byNotebook) { db in try db.notebook("Work") }
        try h.write { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO Notebook (name, createdAt, position) VALUES ('Work', ?, 2)",
                arguments: [day])
            try db.execute(sql: "DELETE FROM Notebook WHERE name = 'Work'")
        }
        #expect(lines(h.recorder.updates, text) == ["reload | Work[]", "s-[0] | "])
        try h.check()
    }

    /// A notebook inserted and deleted in one transaction never existed outside it: though
    /// its table has a unique constraint (so the replaced-row log sees the delete), nothing
    /// of it is reported.
    @Test func rowInsertedAndDeletedInOneTransactionIsNotReported() throws {
        let store = try Store.inMemory(schema: NotesModel.schema)
        let recorder = CommitRecorder(store)
        try store.write { db in
            let temporary = try db.notebook("Temporary")
            try db.execute(sql: "DELETE FROM Notebook WHERE id = ?", arguments: [temporary.id.rawValue])
            try db.note("kept")
        }
        #expect(recorder.commits.map { $0.tables.keys.sorted() } == [["Note"]])
    }

    /// A transaction whose changes cancel out delivers nothing, and the log entries it made
    /// are not read again by the next commit.
    @Test func skippedCommitLeavesNothingForTheNext() throws {
        let store = try Store.inMemory(schema: NotesModel.schema)
        let recorder = CommitRecorder(store)
        try store.write { db in
            let temporary = try db.notebook("Temporary")
            try db.execute(sql: "DELETE FROM Notebook WHERE id = ?", arguments: [temporary.id.rawValue])
        }
        #expect(recorder.commits.isEmpty)
        try store.write { db in try db.note("next") }
        #expect(recorder.commits.map { $0.tables.keys.sorted() } == [["Note"]])
    }

    /// Changes made by another connection (another process) and announced with GRDB's
    /// `Database.notifyChanges(in:)`: GRDB does not say which tables, so the commit
    /// invalidates every table, and the controller refetches.
    @Test func changesNotifiedWithoutDetailsAreRefetched() throws {
        let directory = try TemporaryDirectory()
        let store = try Store(schema: NotesModel.schema, path: directory.path("notes.sqlite"))
        let recorder = CommitRecorder(store)
        let h = try Harness(store: store, Note.Fetches.all) { db in try db.note("a") }
        try writeNoteFromAnotherConnection("b", path: directory.path("notes.sqlite"))
        recorder.reset()
        try h.write { db in try db.notifyChanges(in: Table("Note")) }
        #expect(lines(h.recorder.updates, text) == ["reload | [a]", "i+[[0, 1]] | [a b]"])
        #expect(recorder.commits.map(\.invalidatedTables) == [Set(SchemaSQL(schema: NotesModel.schema).columnsByTable.keys)])
        #expect(recorder.commits.first?.tables.isEmpty == true)
        try h.check()
    }

    /// ``Store/notifyExternalChanges(in:)`` invalidates exactly the tables it is given.
    @Test func externalChangesAnnouncedByTheStore() throws {
        let directory = try TemporaryDirectory()
        let store = try Store(schema: NotesModel.schema, path: directory.path("notes.sqlite"))
        let recorder = CommitRecorder(store)
        let h = try Harness(store: store, Note.Fetches.all) { db in try db.note("a") }
        try writeNoteFromAnotherConnection("b", path: directory.path("notes.sqlite"))
        recorder.reset()
        try store.notifyExternalChanges(in: ["Note", "NotATable"])
        h.controller.waitForDeliveries()
        #expect(lines(h.recorder.updates, text) == ["reload | [a]", "i+[[0, 1]] | [a b]"])
        #expect(recorder.commits.map(\.invalidatedTables) == [["Note"]])
        try h.check()
    }

    /// A table announced as changed that the results do not read leaves them alone: no
    /// refetch, no delivery.
    @Test func externalChangesToOtherTablesAreIgnored() throws {
        let store = try Store.inMemory(schema: NotesModel.schema)
        let trace = store.traceStatements()
        let h = try Harness(store: store, Note.Fetches.all) { db in try db.note("a") }
        let reads = try ItemReads(lastFullFetchIn: trace.statements)
        trace.removeAll()
        try store.notifyExternalChanges(in: ["Tag"])
        h.controller.waitForDeliveries()
        #expect(reads.fullFetches(in: trace.statements) == 0)
        #expect(!trace.statements.contains { $0.contains("FROM \"Note\"") }, "\(trace.statements)")
        #expect(lines(h.recorder.updates, text) == ["reload | [a]"])
        try store.notifyExternalChanges(in: ["Note"])
        h.controller.waitForDeliveries()
        #expect(reads.fullFetches(in: trace.statements) == 1)
    }

    private func writeNoteFromAnotherConnection(_ title: String, path: String) throws {
        let other = try DatabaseQueue(path: path)
        try other.write { db in
            try db.execute(sql: "INSERT INTO Note (title, updatedAt) VALUES (?, '2020-01-01 00:00:00.000')", arguments: [title])
        }
        try other.close()
    }

    /// `DELETE FROM Note` without `WHERE`: SQLite's truncate optimisation would skip the
    /// update hook; every note must still go.
    @Test func deleteWithoutWhereRemovesEveryItem() throws {
        let h = try Harness(Note.Fetches.all) { db in
            for title in ["a", "b", "c"] { try db.note(title) }
        }
        try h.write { db in try db.execute(sql: "DELETE FROM Note") }
        #expect(lines(h.recorder.updates, text) == ["reload | [a b c]", "i-[[0, 0], [0, 1], [0, 2]] | []"])
        try h.check()
    }

    /// A savepoint rolled back with raw SQL inside a committed transaction reports nothing
    /// of what it did.
    @Test func rawSavepointRolledBackInsideACommit() throws {
        let h = try Harness(Note.Fetches.all) { db in try db.note("a") }
        try h.write { db in
            try db.note("b")
            try db.execute(sql: "SAVEPOINT s")
            try db.note("dropped")
            try db.execute(sql: "UPDATE Note SET title = 'z' WHERE title = 'a'")
            try db.execute(sql: "ROLLBACK TO SAVEPOINT s")
            try db.execute(sql: "RELEASE SAVEPOINT s")
        }
        #expect(lines(h.recorder.updates, text) == ["reload | [a]", "i+[[0, 1]] | [a b]"])
        try h.check()
    }

    /// Text with NUL characters (written by raw SQL) orders by all its bytes in SQLite: the
    /// controller must order it the same.
    @Test func textWithNULOrdersAsInSQLite() throws {
        let h = try Harness(Note.Fetches.all) { db in try db.note("m") }
        try h.write { db in
            try db.execute(sql: """
                INSERT INTO Note (title, updatedAt) VALUES ('a' || char(0) || 'c', '2020-01-01 00:00:00.000'),                 ('a' || char(0) || 'b', '2020-01-01 00:00:00.000')
                """)
        }
        try h.write { db in
            try db.execute(sql: "INSERT INTO Note (title, updatedAt) VALUES ('a' || char(0) || 'a', '2020-01-01 00:00:00.000')")
        }
        // GRDB reads all three titles as "a"; SQLite orders them by every byte.
        let ids = { (snapshot: ResultsSnapshot<Note, NoSection>) in snapshot.sections[0].rows.compactMap(\.item?.id.rawValue) }
        #expect(h.recorder.updates.map { ids($0.snapshot) } == [[1], [3, 2, 1], [4, 3, 2, 1]])
        try h.check()
    }
}

extension ResultsRawSQLTests {
    /// A sort column whose values are of two storage classes — NULLs among the texts of an
    /// optional attribute, as any program may write them — is ordered as SQLite orders it: at
    /// the open (the eager key store keeps that column as plain values from the first value of
    /// another class on), and after commits that write texts and NULLs to it, insert, delete
    /// and change every row. Compared with SQLite's own `ORDER BY` after every step; every
    /// batch replayed on the snapshot before it.
    @Test func sortColumnMixingStorageClasses() throws {
        let store = try Store.inMemory(schema: NotesModel.schema)
        try store.write { db in
            for (name, color) in [("a", "'red'"), ("b", "NULL"), ("c", "'blue'"), ("d", "NULL"), ("e", "'green'"), ("f", "'blue'")] {
                try db.execute(sql: "INSERT INTO Notebook (name, createdAt, position, color) VALUES (?, ?, 0, \(color))", arguments: [name, day])
            }
        }
        let classes = try store.read { db in try String.fetchSet(db, sql: "SELECT typeof(color) FROM Notebook") }
        #expect(classes == ["text", "null"], "the file holds both storage classes")
        let controller = try ResultsController(
            store: store, request: ResultsRequest<Notebook, NoSection>(sortedBy: [Notebook.color.ascending]),
            deliveryQueue: DispatchQueue(label: "strata.tests.delivery"))
        controller.checksInvariants = true
        let recorder = DeliveryRecorder<Notebook, NoSection>()
        controller.coordinate(recorder)
        func expectSQLiteOrder(_ step: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
            controller.waitForDeliveries()
            let stored = try store.read { db in try String.fetchAll(db, sql: "SELECT name FROM Notebook ORDER BY color, id") }
            let shown = controller.snapshot.sections.flatMap { $0.rows.compactMap(\.item?.name) }
            #expect(shown == stored, "\(step)", sourceLocation: sourceLocation)
        }
        try expectSQLiteOrder("open")
        let steps: [(String, String)] = [
            ("a NULL becomes a text", "UPDATE Notebook SET color = 'amber' WHERE name = 'b'"),
            ("a text becomes NULL", "UPDATE Notebook SET color = NULL WHERE name = 'a'"),
            ("a new row with NULL", "INSERT INTO Notebook (name, createdAt, position) SELECT 'g', createdAt, 0 FROM Notebook LIMIT 1"),
            ("a new row with a text", "INSERT INTO Notebook (name, createdAt, position, color) SELECT 'h', createdAt, 0, 'azure' FROM Notebook LIMIT 1"),
            ("a deletion", "DELETE FROM Notebook WHERE name = 'c'"),
            ("every row", "UPDATE Notebook SET color = CASE WHEN color IS NULL THEN 'zinc' WHEN color < 'c' THEN NULL ELSE color END"),
        ]
        for (step, sql) in steps {
            try store.write { db in try db.execute(sql: sql) }
            try expectSQLiteOrder(step)
        }
        var previous: ResultsSnapshot<Notebook, NoSection>?
        for update in recorder.updates {
            switch update {
            case .reload(let snapshot): previous = snapshot
            case .batch(let batch, let snapshot):
                let old = try #require(previous, "a batch before any reload")
                try BatchValidator.validate(batch, from: old, to: snapshot)
                #expect(try batch.apply(to: old, reading: snapshot) == snapshot)
                previous = snapshot
            }
        }
        #expect(recorder.updates.count == steps.count + 1)
    }
}
