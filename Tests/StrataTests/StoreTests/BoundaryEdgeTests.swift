import Foundation
import GRDB
import Testing
@testable import Strata

/// Edges where a value or a file crosses from one side to another: a string rewritten in
/// another Unicode normalization form, an empty path, a unique constraint added over rows
/// that already break it.
@Suite("Boundary edges")
struct BoundaryEdgeTests {
    static let composed = "caf\u{E9}"
    static let decomposed = "cafe\u{301}"

    @Test("an update to another Unicode normalization form reaches the live snapshot, byte for byte, as an update")
    func normalizationFormReachesSnapshot() throws {
        #expect(Self.composed == Self.decomposed)  // Swift's ==, which is why this is an edge
        let harness = try Harness(Note.Fetches.all) { db in try db.note(Self.composed) }
        try harness.write { db in
            var note = try db.note(titled: Self.composed)
            note.title = Self.decomposed
            try db.update(note)
        }
        let stored = try harness.store.read { db in try String.fetchOne(db, sql: "SELECT title FROM Note")! }
        #expect(Array(stored.unicodeScalars) == Array(Self.decomposed.unicodeScalars))
        let shown = try #require(harness.controller.snapshot.items.first?.title)
        #expect(Array(shown.unicodeScalars) == Array(Self.decomposed.unicodeScalars), "the snapshot kept the old bytes")
        guard case .batch(let batch, let delivered)? = harness.recorder.updates.last else {
            Issue.record("no batch was delivered for the change: \(harness.recorder.updates.count) updates")
            return
        }
        #expect(batch.itemUpdates == [ItemPath(section: 0, item: 0)])
        #expect(Array(delivered.items[0].title.unicodeScalars) == Array(Self.decomposed.unicodeScalars))
        try harness.check()
        // Back again, through raw SQL this time.
        try harness.write { db in try db.execute(sql: "UPDATE Note SET title = ?", arguments: [Self.composed]) }
        #expect(Array(harness.controller.snapshot.items[0].title.unicodeScalars) == Array(Self.composed.unicodeScalars))
        try harness.check()
    }

    @Test("an empty path is refused, naming the problem, instead of opening a temporary database")
    func emptyPathRefused() throws {
        #expect {
            try Store(schema: NotesModel.schema, path: "")
        } throws: { error in
            guard let error = error as? StoreOpenError else { return false }
            return error.reason == .emptyPath && error.description.contains("empty")
        }
    }

    @Test("a unique constraint added over rows that break it: the migration is refused, naming the entity, attributes and rows")
    func uniqueAddedOverDuplicates() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        var store = try Store(schema: NotesModel.schema, path: path)
        try store.write { db in
            for title in ["a", "b", "a", "c", "b"] { try db.note(title) }
        }
        try store.close()
        var unique = NotesModel.schema
        let index = unique.entities.firstIndex { $0.name == "Note" }!
        let attribute = unique.entities[index].attributes.firstIndex { $0.name == "title" }!
        unique.entities[index].attributes[attribute].isUnique = true
        #expect {
            try Store(schema: unique, path: path)
        } throws: { error in
            guard case MigrationError.duplicateValues(let entity, let attributes, let rows)? = error as? MigrationError else {
                Issue.record("\(type(of: error)): \(error)")
                return false
            }
            #expect(entity == "Note" && attributes == ["title"])
            #expect(rows == [[1, 3], [2, 5]])
            #expect("\(error)".contains("1, 3"))
            return true
        }
        // Refused without a change: the old model still opens the file.
        store = try Store(schema: NotesModel.schema, path: path)
        #expect(try store.read { db in try Note.fetchCount(db) } == 5)
        try store.close()
    }
}

extension BoundaryEdgeTests {
    @Test("DDL run by another program while the store is open: reads, writes and live results go on")
    func otherProgramsDDL() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        let store = try Store(schema: NotesModel.schema, path: path, options: Store.Options(externalCommitInterval: nil))
        let harness = try Harness(store: store, Note.Fetches.byNotebook) { db in
            let work = try db.notebook("Work")
            try db.note("a", in: work)
        }
        // Another program, on its own connection: a column, an index, a table and a trigger of its own.
        let other = try DatabaseQueue(path: path)
        try other.write { db in
            try db.execute(sql: "ALTER TABLE Note ADD COLUMN extra TEXT")
            try db.execute(sql: "CREATE INDEX otherIndex ON Note(extra)")
            try db.execute(sql: "CREATE TABLE otherTable (x)")
            try db.execute(sql: "UPDATE Note SET extra = 'x'")
        }
        try other.close()
        try store.checkForExternalCommits()
        try harness.write { db in
            try db.note("b", in: try db.notebook(named: "Work"))
            var note = try db.note(titled: "a")
            note.title = "c"
            try db.update(note)
        }
        #expect(text(harness.controller.snapshot) == "Work[b c]")
        #expect(try store.read { db in try Note.fetchCount(db) } == 2)
        try harness.check()
        // The store opens the file again: the other program's additions are left alone.
        try store.close()
        let again = try Store(schema: NotesModel.schema, path: path)
        #expect(try again.read { db in try db.tableExists("otherTable") && db.columns(in: "Note").contains { $0.name == "extra" } })
        try again.close()
    }
}
