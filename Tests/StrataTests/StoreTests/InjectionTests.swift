import Foundation
import GRDB
import Testing
@testable import Strata

@Suite("Store injection")
struct InjectionTests {
    static let hostile = [
        "'; DROP TABLE Note; --", "Robert'); DROP TABLE Tag;--", "\" OR 1=1 --", "' OR '1'='1", "a;b;c",
        "SELECT * FROM Note", "NULL", "%", "_", "\\", "''", "\"\"", "?", "?1", ":name", "$text", "/* c */", "é'ü\"😀",
    ]

    @Test("values with quotes, semicolons and SQL keywords are stored and matched literally")
    func hostileValues() throws {
        let directory = try TemporaryDirectory()
        let store = try Store(schema: NotesModel.schema, path: directory.path("i.sqlite"))
        let notes = try store.write { db in
            try Self.hostile.map { try db.insert(Note(title: $0, body: $0 + $0, updatedAt: Date())) }
        }
        for (text, note) in zip(Self.hostile, notes) {
            let (equal, contains, like, search) = try store.read { db in
                (try db.fetchAll(Note.self, where: Note.title == text).map(\.id),
                 try db.fetchAll(Note.self, where: Note.body.contains(text, .caseInsensitive)).map(\.id),
                 try db.fetchAll(Note.self, where: Note.title.like(text)).map(\.id),
                 try db.fetchAll(Note.Fetches.search(text: text)).map(\.id))
            }
            #expect(equal == [note.id], "\(text)")
            #expect(contains.contains(note.id), "\(text)")
            #expect(search.contains(note.id), "\(text)")
            if !text.contains("*") && !text.contains("?") { #expect(like == [note.id], "\(text)") }
        }
        // Nothing was dropped, every row is intact.
        let titles = try store.read { db in try db.fetchAll(Note.self).map(\.title) }
        #expect(titles == Self.hostile)
        let tables = try store.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        }
        #expect(tables == ["Note", "Note_tags", "Notebook", "Tag", "strata_history", "strata_metadata"])

        // delete(where:) with a hostile value deletes exactly that row.
        let deleted = try store.write { db in try db.delete(Note.self, where: Note.title == Self.hostile[0]) }
        #expect(deleted == 1)
        let count = try store.read { db in try db.fetchCount(Note.self) }
        #expect(count == Self.hostile.count - 1)
    }

    @Test("statements carry values as arguments, never in their text")
    func valuesAreBound() throws {
        let store = try Store.inMemory(schema: NotesModel.schema)
        let predicate = Note.title == "'; DROP TABLE Note; --" && Note.notebook.name.contains("x'y", .caseInsensitive)
            && Note.tags.any(Tag.name.in(["a'b", "c"]))
        let (text, arguments) = try store.read { db -> (String, StatementArguments) in
            var builder = try SQLQueryBuilder(schema: NotesModel.schema, rootEntity: "Note")
            let sql = try builder.select("*", where: predicate.node, orderBy: [Note.priority.descending.node])
            return try sql.build(db)
        }
        #expect(!text.contains("DROP"))
        #expect(!text.contains("x'y"))
        #expect(!text.contains("a'b"))
        #expect(!text.contains("normal"), "enum cases of the ORDER BY are bound too")
        #expect(arguments.description.contains("DROP TABLE"))
    }
}
