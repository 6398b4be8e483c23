import Foundation
import Strata
import Testing

// The one-line reads on Store, synchronous and asynchronous, give what the same reads
// inside `read` give.
@Suite("Store one-line reads")
struct StoreOneLinerTests {
    private func store() throws -> Strata.Store {
        let store = try Strata.Store.inMemory(schema: NotesModel.schema)
        let work = try store.insert(Notebook(name: "Work"))
        for (title, priority) in [("b", Priority.high), ("a", .low), ("c", .high)] {
            try store.insert(Note(title: title, priority: priority, updatedAt: Foundation.Date(), notebookID: work.id))
        }
        return store
    }

    @Test func synchronous() throws {
        let store = try store()
        let all = try store.fetchAll(Note.self)
        #expect(all.map(\.title) == ["b", "a", "c"], "by id")
        #expect(try store.fetchAll(Note.self, where: Note.priority == .high, sortedBy: [Note.title.descending]).map(\.title) == ["c", "b"])
        #expect(try store.fetchCount(Note.self) == 3)
        #expect(try store.fetchCount(Note.self, where: Note.priority == .high) == 2)
        #expect(try store.fetchCount(Note.Fetches.search(text: "B")) == 1)
        #expect(try store.fetchOne(Note.self, id: all[0].id) == all[0])
        #expect(try store.fetchAll(Note.self) == (try store.read { db in try db.fetchAll(Note.self) }))
    }

    @Test func asynchronous() async throws {
        let store = try store()
        let all = try await store.fetchAll(Note.self)
        #expect(all.map(\.title) == ["b", "a", "c"])
        let low = try await store.fetchAll(Note.self, where: Note.priority == .low)
        #expect(low.map(\.title) == ["a"])
        let found = try await store.fetchAll(Note.Fetches.search(text: "c"))
        #expect(found.map(\.title) == ["c"])
        let folded = try await store.fetchCount(Note.self, where: Note.title.equals("A", .caseInsensitive))
        #expect(folded == 1)
        let count = try await store.fetchCount(Note.Fetches.all)
        #expect(count == 3)
        let one = try await store.fetchOne(Note.self, id: all[1].id)
        #expect(one?.title == "a")
    }
}
