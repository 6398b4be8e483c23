import Foundation
import GRDB
import Testing
@testable import Strata

extension MigrationTests {
    @Test("renaming an entity and a many-to-many relationship keeps the links")
    func renamedManyToMany() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        let store = try Store(schema: NotesModel.schema, path: path)
        try store.write { db in
            let tags = try (0..<3).map { try db.insert(Tag(name: "t\($0)")) }
            for index in 0..<4 {
                let note = try db.insert(Note(title: "n\(index)", updatedAt: Date()))
                for tag in tags.prefix(index) { try db.link(note.id, Note.tags, tag.id) }
            }
        }
        try store.close()

        var schema = NotesModel.schema
        schema.entities[1].relationships[1] = .init(
            name: "labels", destination: "Label", inverse: "notes", isToMany: true,
            storage: .joinTable(name: "Label_notes", column: "noteID", inverseColumn: "labelID"), renamedFrom: "tags")
        // The other side lists the join table first now, with its columns swapped.
        schema.entities[2] = EntityDescriptor(
            name: "Label", attributes: [.init(name: "title", type: .string, renamedFrom: "name")],
            relationships: [
                .init(name: "notes", destination: "Note", inverse: "labels", isToMany: true, deleteRule: .cascade,
                      storage: .joinTable(name: "Label_notes", column: "labelID", inverseColumn: "noteID")),
            ],
            renamedFrom: "Tag")
        schema.entities = [schema.entities[2], schema.entities[0], schema.entities[1]]
        let migrated = try Store(schema: schema, path: path)
        let links = try migrated.read { db in
            try GRDB.Row.fetchAll(
                db,
                sql: "SELECT Note.title, Label.title FROM Label_notes JOIN Note ON Note.id = noteID "
                    + "JOIN Label ON Label.id = labelID ORDER BY Note.title, Label.title"
            ).map { "\($0[0] as String)-\($0[1] as String)" }
        }
        #expect(links == ["n1-t0", "n2-t0", "n2-t1", "n3-t0", "n3-t1", "n3-t2"])
        let tables = try migrated.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        }
        #expect(tables == ["Label", "Label_notes", "Note", "Notebook", "strata_history", "strata_metadata"])
        // The new rule works: deleting a label deletes its notes.
        try migrated.write { db in try db.execute(sql: "DELETE FROM Label WHERE title = 't2'") }
        let notes = try migrated.read { db in try String.fetchAll(db, sql: "SELECT title FROM Note ORDER BY title") }
        #expect(notes == ["n0", "n1", "n2"])
    }
}
