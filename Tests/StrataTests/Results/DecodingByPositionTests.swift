import Foundation
import GRDB
import StrataTestSupport
import Testing
@testable import Strata

/// A results fetch decodes generated entities by position (`init(strataColumns:)` over the
/// columns `strataColumnNames`, read straight from SQLite); GRDB's record fetches decode them
/// by name (`init(row:)`). Both must read the same values and refuse the same ones with the
/// same error, for rows another program wrote.
@Suite("Decoding by position reads what decoding by name reads")
struct DecodingByPositionTests {
    /// Rows written by raw SQL, values at the edges of each column's type.
    static let goodRows: [String] = [
        "INSERT INTO Note (title, body, pinned, priority, updatedAt) VALUES ('', '', 0, 'low', '0001-01-01 00:00:00.000')",
        "INSERT INTO Note (title, body, pinned, priority, updatedAt) VALUES (CAST(X'610062' AS TEXT), CAST(X'00' AS TEXT), 1, 'high', '9999-12-31 23:59:59.999')",
        "INSERT INTO Note (title, body, pinned, priority, updatedAt) VALUES ('é😀 a long title that does not fit in a small string', 'x', 0, 'normal', '2026-11-27 08:00:00.000')",
        "INSERT INTO Note (id, title, body, pinned, priority, updatedAt) VALUES (9223372036854775807, 'max id', '', 1, 'normal', '2026-01-01 00:00:00.000')",
        // Dates Strata reads from their text itself (milliseconds that the calendar rounds at
        // the scale of a day, before 1970 and 2001), and others it leaves to GRDB.
        "INSERT INTO Note (title, body, pinned, priority, updatedAt) VALUES ('ms', '', 0, 'low', '2024-02-29 21:59:59.999')",
        "INSERT INTO Note (title, body, pinned, priority, updatedAt) VALUES ('1969', '', 0, 'low', '1969-12-31 23:59:59.001')",
        "INSERT INTO Note (title, body, pinned, priority, updatedAt) VALUES ('2000', '', 0, 'low', '2000-12-31 23:59:59.003')",
        "INSERT INTO Note (title, body, pinned, priority, updatedAt) VALUES ('1600', '', 0, 'low', '1600-02-29 00:00:00.017')",
        "INSERT INTO Note (title, body, pinned, priority, updatedAt) VALUES ('1500', '', 0, 'low', '1500-03-01 12:00:00.500')",
        "INSERT INTO Note (title, body, pinned, priority, updatedAt) VALUES ('day', '', 0, 'low', '2024-01-01')",
        "INSERT INTO Note (title, body, pinned, priority, updatedAt) VALUES ('minutes', '', 0, 'low', '2024-01-01 10:30')",
        "INSERT INTO Note (title, body, pinned, priority, updatedAt) VALUES ('T', '', 0, 'low', '2024-01-01T10:30:00.250')",
        "INSERT INTO Note (title, body, pinned, priority, updatedAt) VALUES ('rolled', '', 0, 'low', '2023-02-29 10:00:00.000')",
    ]

    @Test("a controller's items equal GRDB's fetch of the same rows, text with NUL characters included")
    func sameValues() throws {
        let store = try Store.inMemory(schema: NotesModel.schema)
        try store.writer.write { db in
            try db.execute(sql: "INSERT INTO Notebook (id, name, createdAt, position) VALUES (7, 'n', '2026-01-01 00:00:00.000', 0)")
            for sql in Self.goodRows { try db.execute(sql: sql) }
            try db.execute(sql: "UPDATE Note SET notebookID = 7 WHERE title = 'max id'")
        }
        let controller = try ResultsController(
            store: store, request: Note.Fetches.all, deliveryQueue: DispatchQueue(label: "decoding"))
        let byPosition = controller.snapshot.sections.flatMap(\.items).sorted { $0.id.rawValue < $1.id.rawValue }
        let byName = try store.read { db in try Note.order(Column("id")).fetchAll(db) }
        #expect(byPosition.count == Self.goodRows.count)
        #expect(byPosition == byName)
        #expect(byName.contains { $0.title == "a\u{0}b" && $0.body == "\u{0}" }, "text read in full by name")
        #expect(byName.contains { $0.notebookID?.rawValue == 7 && $0.id.rawValue == .max })
    }

    /// Values another program wrote that `Note` cannot represent.
    static let badValues: [(column: String, sql: String)] = [
        ("pinned", "2"), ("pinned", "'yes'"), ("pinned", "0.5"), ("priority", "'urgent'"), ("priority", "1"),
        ("title", "X'61'"), ("updatedAt", "'not a date'"), ("updatedAt", "12"), ("notebookID", "'x'"),
        ("notebookID", "1.5"), ("body", "X''"),
    ]

    @Test("a value the type cannot represent fails the open with the error GRDB's fetch gives", arguments: badValues.indices)
    func sameErrors(_ index: Int) throws {
        let (column, value) = Self.badValues[index]
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        let store = try Store(schema: NotesModel.schema, path: path)
        try store.writer.write { db in
            try db.execute(sql: Self.goodRows[0])
            try db.execute(sql: "INSERT INTO Note (id, title, body, pinned, priority, updatedAt) VALUES (5, 't', '', 0, 'low', '2026-01-01 00:00:00.000')")
        }
        // Another program, past the store's own checks (its triggers refuse some of these values).
        let raw = try DatabaseQueue(path: path)
        try raw.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA ignore_check_constraints = ON")
            try db.execute(sql: "PRAGMA foreign_keys = OFF")
            for trigger in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'Note'") {
                try db.execute(sql: "DROP TRIGGER \"\(trigger)\"")
            }
            try db.execute(sql: "UPDATE Note SET \"\(column)\" = \(value) WHERE id = 5")
        }
        try raw.close()
        var byName: ValueDecodingError?
        do { _ = try store.read { db in try Note.fetchAll(db) } } catch let error as ValueDecodingError { byName = error }
        var byPosition: ValueDecodingError?
        do {
            _ = try ResultsController(store: store, request: Note.Fetches.all, deliveryQueue: DispatchQueue(label: "decoding"))
        } catch let error as ValueDecodingError { byPosition = error }
        let expected = try #require(byName, "GRDB's fetch read \(column) = \(value)")
        #expect(expected.column == column)
        #expect(byPosition == expected, "\(String(describing: byPosition)) vs \(expected)")

        // Batched pages decode by position too: reading the row throws the same error (the
        // open reads keys only; a bad id or section key fails it instead).
        var inPages: ValueDecodingError?
        do {
            let batched = try ResultsController(
                store: store, request: Note.Fetches.all, loading: .batched(pageSize: 1),
                deliveryQueue: DispatchQueue(label: "decoding"))
            #expect(batched.engineForTesting.isBatched)
            for section in batched.snapshot.sections {
                for index in section.rows.indices { _ = try section.rows.item(at: index) }
            }
        } catch let error as ValueDecodingError { inPages = error }
        #expect(inPages == expected, "pages: \(String(describing: inPages)) vs \(expected)")
    }
}
