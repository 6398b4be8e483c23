import Foundation
import Strata
import Testing

/// `sort: [-id]` and `sort: [notebook.id]` in a model become `Note.id.descending` and
/// `Note.notebook.id.ascending`: the store orders by row ids, through to-ones too.
@Suite("Store sorts by row id")
struct SortByIDTests {
    @Test func sortsByOwnAndRelatedRowID() throws {
        let store = try Store.inMemory(schema: NotesModel.schema)
        let (a, b) = try store.write { db in
            (try db.insert(Notebook(name: "A")), try db.insert(Notebook(name: "B")))
        }
        let date = Date(timeIntervalSince1970: 0)
        for (title, notebook) in [("1", b), ("2", a), ("3", b), ("4", a)] {
            try store.insert(Note(title: title, updatedAt: date, notebookID: notebook.id))
        }
        let newest = try store.fetchAll(ResultsRequest<Note, NoSection>(sortedBy: [Note.id.descending]))
        #expect(newest.map(\.title) == ["4", "3", "2", "1"])
        let byNotebook = try store.fetchAll(
            ResultsRequest<Note, NoSection>(sortedBy: [Note.notebook.id.descending, Note.id.ascending]))
        #expect(byNotebook.map(\.title) == ["1", "3", "2", "4"])
    }
}
