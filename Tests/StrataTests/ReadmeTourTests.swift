import Foundation
import Strata
import Testing

/// The README's five-minute tour, step by step, on the fixture model (same entities as the
/// README's model). If this test fails, the README is wrong.
@Suite("README tour")
struct ReadmeTourTests {
    @Test func tourFromStoreToAppliedBatch() async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("strata-tour-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        // 3. Open a store, write, fetch.
        let store = try Store(schema: NotesModel.schema, path: directory.appendingPathComponent("notes.sqlite").path)
        let work = try store.insert(Notebook(name: "Work"))
        #expect(work.id.isSaved)
        try store.insert(Note(title: "Buy milk", updatedAt: Date(), notebookID: work.id))
        try store.insert(Note(title: "Ship it", priority: .high, updatedAt: Date(), notebookID: work.id))

        let found = try await store.read { db in try db.fetchAll(Note.Fetches.search(text: "MILK")) }
        #expect(found.map(\.title) == ["Buy milk"])
        let urgent = try await store.read { db in
            try db.fetchAll(
                Note.self, where: Note.priority == .high && Note.notebook.name == "Work",
                sortedBy: [Note.updatedAt.descending])
        }
        #expect(urgent.map(\.title) == ["Ship it"])

        // 4. Observe a sectioned list.
        let controller = try ResultsController(
            store: store, request: Note.Fetches.byNotebook, deliveryQueue: DispatchQueue(label: "strata.tests.tour"))
        #expect(controller.snapshot.sections.map { $0.value.object?.name } == ["Work"])
        #expect(controller.snapshot.sections[0].items.map(\.title) == ["Buy milk", "Ship it"])

        var updates = controller.updates.makeAsyncIterator()
        guard case .reload(let first)? = try await updates.next() else {
            Issue.record("the first update is not a reload")
            return
        }

        // 5. A commit arrives as one batch that replays exactly.
        try store.insert(Notebook(name: "Home", position: 1))
        guard case .batch(let batch, let snapshot)? = try await updates.next() else {
            Issue.record("the second update is not a batch")
            return
        }
        #expect(batch.sectionInserts == [1])
        try BatchValidator.validate(batch, from: first, to: snapshot)
        #expect(try batch.apply(to: first, reading: snapshot) == snapshot)

        // Post-fetch filters are live: a batch, not a reload.
        controller.options.filter = { !$0.title.hasPrefix("Buy") }
        guard case .batch(let filtered, let afterFilter)? = try await updates.next() else {
            Issue.record("the filter did not emit a batch")
            return
        }
        #expect(filtered.itemDeletes == [ItemPath(section: 0, item: 0)])
        #expect(afterFilter.sections[0].items.map(\.title) == ["Ship it"])

        // Pause, change, resume: one reload with the new state.
        controller.pause()
        try store.insert(Note(title: "While paused", updatedAt: Date(), notebookID: work.id))
        try controller.resume()
        guard case .reload(let resumed)? = try await updates.next() else {
            Issue.record("resume did not deliver a reload")
            return
        }
        #expect(resumed.sections[0].items.map(\.title) == ["Ship it", "While paused"])
    }

    /// 6. Lists the user orders by hand.
    @Test func orderedListTour() throws {
        let store = try Store.inMemory(schema: TodosModel.schema)
        let (inbox, todo) = try store.write { db in
            let inbox = try db.insert(TodoList(name: "Inbox"))
            try db.insert(Todo(title: "a", listID: inbox.id))
            return (inbox, try db.insert(Todo(title: "b", listID: inbox.id)))
        }
        let queue = DispatchQueue(label: "tour")
        let todos = try ResultsController(store: store, request: Todo.Fetches.byList, deliveryQueue: queue)
        try queue.sync { try todos.moveItem(from: IndexPath(indexes: [0, 1]), to: IndexPath(indexes: [0, 0])) }
        #expect(todos.snapshot.sections[0].items.map(\.title) == ["b", "a"])
        try queue.sync { try todos.deleteItem(at: IndexPath(indexes: [0, 1])) }
        try store.write { db in try db.move(todo.id, in: TodoList.todos, of: inbox.id, to: 0) }
        todos.waitForDeliveries()
        #expect(todos.snapshot.sections[0].items.map(\.title) == ["b"])
    }
}
