import Dispatch
import Foundation
import GRDB
import Testing

@testable import Strata

/// An eager controller whose items' slots change layout (``ItemSlots``) in the middle of its
/// life, the way a user meets it: rows of a table (slots by id after the open), a row written
/// with a rowid far outside the others (dense slots again, inside a commit), a refetch (the
/// layout chosen again), and deletions in commits small enough to be applied incrementally
/// that leave the range less than half full (dense again). Every batch is checked and
/// replayed, and the controller compared with a fresh fetch and with SQLite's `ORDER BY`.
@Suite struct SlotLayoutTests {
    private static func layoutIsByID(_ h: Harness<Notebook>) throws -> Bool {
        let engine = try #require(h.controller.engineForTesting as? ResultsEngine<Note, Notebook, EagerLoading<Note>>)
        return engine.index.keys._slotsAreByID
    }

    private static func expectSQLiteOrder(_ h: Harness<Notebook>, _ step: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        h.controller.waitForDeliveries()
        let stored = try h.store.read { db in
            try Int64.fetchAll(
                db,
                sql: """
                    SELECT Note.id FROM Note JOIN Notebook ON Notebook.id = Note.notebookID \
                    ORDER BY Notebook.position, Notebook.name, Notebook.id, Note.pinned DESC, Note.title, Note.id
                    """)
        }
        let shown = h.controller.snapshot.sections.flatMap { $0.rows.compactMap { $0.item?.id.rawValue } }
        #expect(shown == stored, "\(step)", sourceLocation: sourceLocation)
    }

    @Test func layoutChangesInsideCommitsKeepTheResults() throws {
        let h = try Harness(Note.Fetches.byNotebook) { db in
            let notebooks = try (0..<3).map { try db.notebook("n\($0)", position: $0) }
            for index in 0..<2_000 {
                try db.note(String(format: "t%05d", (index * 7_919) % 2_000), in: notebooks[index % 3], pinned: index % 5 == 0)
            }
        }
        #expect(try Self.layoutIsByID(h), "2,000 rows of a table: slots by id")
        try Self.expectSQLiteOrder(h, "open")

        // Holes: rows deleted from the middle of the range (slots stay by id).
        try h.write { db in try db.execute(sql: "DELETE FROM Note WHERE id % 17 = 3") }
        #expect(try Self.layoutIsByID(h), "a few holes: slots by id")
        try Self.expectSQLiteOrder(h, "holes")

        // A row with a rowid far away: the slots turn dense inside the commit, every item's
        // keys moving to its new slot.
        try h.write { db in
            try db.execute(
                sql: "INSERT INTO Note (id, title, updatedAt, notebookID) SELECT 5000000, 't00500x', updatedAt, notebookID FROM Note LIMIT 1")
        }
        #expect(try !Self.layoutIsByID(h), "a far rowid: dense slots")
        try Self.expectSQLiteOrder(h, "far row")
        try h.write { db in try db.execute(sql: "UPDATE Note SET title = 't00000a', pinned = 1 WHERE id = 5000000") }
        try Self.expectSQLiteOrder(h, "far row moved")

        // The far row goes, and a commit of every row (a refetch) chooses the layout again.
        try h.write { db in try db.execute(sql: "DELETE FROM Note WHERE id = 5000000") }
        try h.write { db in try db.execute(sql: "UPDATE Note SET title = title || 'x'") }
        #expect(try Self.layoutIsByID(h), "after the refetch: slots by id again")
        try Self.expectSQLiteOrder(h, "refetched")

        // New rows take the next rowids: still by id.
        try h.write { db in
            let notebook = try Notebook.fetchOne(db)!
            for index in 0..<20 { try db.note("new\(index)", in: notebook) }
        }
        #expect(try Self.layoutIsByID(h), "new rows: slots by id")
        try Self.expectSQLiteOrder(h, "new rows")

        // Deletions in small commits until fewer than half the range's ids are left.
        var step = 0
        while try h.store.read({ db in try Int.fetchOne(db, sql: "SELECT count(*) FROM Note")! }) > 900 {
            step += 1
            try h.write { db in
                try db.execute(sql: "DELETE FROM Note WHERE id IN (SELECT id FROM Note ORDER BY (id * 31) % 97, id LIMIT 150)")
            }
            try Self.expectSQLiteOrder(h, "deletions \(step)")
        }
        #expect(try !Self.layoutIsByID(h), "a range less than half full: dense slots")
        try h.write { db in try db.execute(sql: "UPDATE Note SET pinned = 1 - pinned WHERE id % 3 = 0") }
        try Self.expectSQLiteOrder(h, "after the relayout")
        try h.check()
    }
}
