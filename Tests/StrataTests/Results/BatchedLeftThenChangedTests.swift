import Foundation
import GRDB
import Testing

@testable import Strata

/// Known issue, found while testing the batched pages on their own: a commit keeps, for the
/// live batched snapshots, the values it changes only of the items the results hold *now*
/// (`PageLoader.commit(changed:wasShown:)` is given `index.contains`). An item that left the
/// results through a related row (its notebook renamed: its own row unchanged, so nothing
/// was kept) and then changed or went is read by an older snapshot that showed it, and had
/// not loaded its page, in the store's current state: a value the snapshot never showed, or
/// `ResultsError.itemUnavailable` (a trap through the rows' subscript). When it is fixed,
/// these tests fail ("known issue was not recorded"): remove `withKnownIssue`.
@Suite struct BatchedLeftThenChangedTests {
    /// A batched controller over the notes of the notebook "Work" (six, one page of two
    /// cached), its first snapshot unread; the notebook renamed, so every note leaves the
    /// results with its own row unchanged; then `change` applied to the first note.
    static func oldSnapshot(after change: (Database, inout Note) throws -> Void) throws -> (ResultsSnapshot<Note, NoSection>, URL) {
        let (store, folder) = try BatchedLoadingTests.fileStore()
        var work = Notebook(name: "Work", createdAt: day)
        var first = Note(title: "n0", updatedAt: day)
        try store.write { db in
            try work.insert(db)
            for i in 0..<6 {
                var note = Note(title: "n\(i)", updatedAt: day, notebookID: work.id)
                try note.insert(db)
                if i == 0 { first = note }
            }
        }
        let queue = DispatchQueue(label: "strata.tests.left-then-changed")
        let controller = try ResultsController(
            store: store, request: Note.Fetches.all.filter(Note.notebook.name == "Work"),
            loading: .batched(pageSize: 2, cachedPages: 1), deliveryQueue: queue)
        queue.sync {}
        let old = controller.snapshot
        work.name = "Home"
        try store.write { db in try work.update(db) }
        queue.sync {}
        try store.write { db in try change(db, &first) }
        queue.sync {}
        return (old, folder)
    }

    @Test("an older batched snapshot reads its own value of an item that left the results, then changed")
    func leftThenUpdated() throws {
        let (old, folder) = try Self.oldSnapshot { db, note in
            note.title = "changed"
            try note.update(db)
        }
        defer { try? FileManager.default.removeItem(at: folder) }
        withKnownIssue("a value kept only for items the results hold now") {
            let value = try old.sections[0].rows.item(at: 0)
            #expect(value?.title == "n0")
        }
    }

    @Test("an older batched snapshot reads its own value of an item that left the results, then was deleted")
    func leftThenDeleted() throws {
        let (old, folder) = try Self.oldSnapshot { db, note in _ = try db.delete(Note.self, id: note.id) }
        defer { try? FileManager.default.removeItem(at: folder) }
        withKnownIssue("a value kept only for items the results hold now") {
            let value = try old.sections[0].rows.item(at: 0)
            #expect(value?.title == "n0")
        }
    }
}
