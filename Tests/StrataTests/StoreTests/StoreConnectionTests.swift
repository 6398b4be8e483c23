import Foundation
import GRDB
import Testing
@testable import Strata

@Suite("Store connections")
struct StoreConnectionTests {
    @Test("file stores use WAL; every connection has foreign keys and recursive triggers on")
    func pragmas() throws {
        let directory = try TemporaryDirectory()
        let store = try Store(schema: NotesModel.schema, path: directory.path("p.sqlite"))
        let read = try store.read { db in
            [try String.fetchOne(db, sql: "PRAGMA journal_mode"),
             try String.fetchOne(db, sql: "PRAGMA foreign_keys"),
             try String.fetchOne(db, sql: "PRAGMA recursive_triggers")]
        }
        let written = try store.write { db in
            [try String.fetchOne(db, sql: "PRAGMA foreign_keys"), try String.fetchOne(db, sql: "PRAGMA recursive_triggers")]
        }
        #expect(read == ["wal", "1", "1"])
        #expect(written == ["1", "1"])
        #expect(store.path == directory.path("p.sqlite"))
        #expect(try Store.inMemory(schema: NotesModel.schema).path == nil)
    }

    @Test("durability sets SQLite's synchronous on the writer, NORMAL by default")
    func durability() throws {
        let directory = try TemporaryDirectory()
        let cases = [(Store.Options(), 1), (Store.Options(durability: .normal), 1), (Store.Options(durability: .full), 2)]
        for (index, (options, expected)) in cases.enumerated() {
            let path = directory.path("d\(index).sqlite")
            let store = try Store(schema: NotesModel.schema, path: path, options: options)
            #expect(try store.write { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") } == expected, "\(options)")
            // Commits are kept whole either way: written, closed, read again.
            try store.write { db in _ = try db.insert(Tag(name: "kept")) }
            try store.close()
            let again = try Store(schema: NotesModel.schema, path: path, options: options)
            #expect(try again.read { db in try String.fetchAll(db, sql: "SELECT name FROM Tag") } == ["kept"])
            try again.close()
        }
    }

    @Test("an unfiltered DELETE reports every row (no truncate optimization)")
    func deleteAll() throws {
        let store = try Store.inMemory(schema: NotesModel.schema)
        try store.write { db in for index in 0..<5 { try db.insert(Tag(name: "\(index)")) } }
        let recorder = CommitRecorder(store)
        try store.write { db in try db.execute(sql: "DELETE FROM Tag") }
        #expect(recorder.commits.first?["Tag"].deleted == [1, 2, 3, 4, 5])
    }

    @Test("foreign keys are enforced on writes")
    func foreignKeys() throws {
        let store = try Store.inMemory(schema: NotesModel.schema)
        // Refused before SQLite's own check, with the object named.
        #expect(throws: RuleViolationError(entity: "Note", id: 1, member: "notebook", rule: .missingDestination("Notebook"))) {
            try store.write { db in try db.insert(Note(title: "x", updatedAt: Date(), notebookID: Notebook.ID(42))) }
        }
        let count = try store.read { db in try db.fetchCount(Note.self) }
        #expect(count == 0)
    }
}
