import Dispatch
import Foundation
import GRDB
import Testing

@testable import Strata

// A user move whose drop another writer already made (see Docs/Decisions.md, "A user edit
// is delivered before it returns, marked, and later batches build on it"): the user's move
// is delivered, then the rest of the other commit, and the controller ends equal to a fresh
// fetch.

// MARK: - Support

/// A file store and a second store on the same file: another writer, as another process
/// would be. Neither checks for the other's commits unless told.
struct TwoTodoStores {
    let folder: URL
    let store: Store
    let other: Store

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("strata-exact-moves-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("todos.sqlite").path
        store = try Store(schema: TodosModel.schema, path: path, options: Store.Options(externalCommitInterval: nil))
        other = try Store(schema: TodosModel.schema, path: path, options: Store.Options(externalCommitInterval: nil))
    }

    func remove() {
        try? FileManager.default.removeItem(at: folder)
    }
}

/// Every section's item ids, in display order.
func itemIDs<Section>(_ snapshot: ResultsSnapshot<Todo, Section>) -> [[Todo.ID]] {
    snapshot.sections.map { $0.items.map(\.id) }
}

// MARK: - Another writer already made the move

@Suite struct MoveAlreadyMadeTests {
    func harness(store: Store? = nil) throws -> TodoHarness<TodoList> {
        try TodoHarness(store: store, Todo.Fetches.byList) { db in
            let work = try db.list("Work", position: 0)
            let home = try db.list("Home", position: 1)
            for title in ["a", "b", "c"] { try db.todo(title, in: work) }
            for title in ["x", "y"] { try db.todo(title, in: home) }
        }
    }

    /// What the other writer commits while the user drags c first: the same move, and an
    /// insert elsewhere.
    static func sameMoveAndAnInsert(_ db: Database) throws {
        let work = try db.list(named: "Work"), home = try db.list(named: "Home")
        try db.move(try db.todo(titled: "c").id, in: TodoList.todos, of: work.id, to: 0)
        try db.todo("d", in: home)
    }

    static let expected = [
        "i>[[0, 2]→[0, 0]] (user move) | Work[c a b] Home[x y]",
        "i+[[1, 2]] | Work[c a b] Home[x y d]",
    ]

    /// The other commit is made through the same store and computed, but its delivery waits
    /// behind the drag on the delivery queue. The move writes nothing; the user's move is
    /// delivered, then the rest of the other commit.
    @Test func throughTheSameStoreWhileItsDeliveryWaits() throws {
        let h = try harness()
        try h.onQueue {
            try h.store.write(Self.sameMoveAndAnInsert)
            try h.controller.moveItem(from: ItemPath(section: 0, item: 2), to: ItemPath(section: 0, item: 0))
        }
        #expect(try h.deliveries() == Self.expected)
        #expect(h.writes.withLock { $0.count } == 1, "the move itself commits nothing")
    }

    /// The other commit is made through another store on the same file; this store learns of
    /// it before the move (delivery waiting, as above) or only after it.
    @Test(arguments: [true, false])
    func throughAnotherStore(checkedBeforeTheMove: Bool) throws {
        let files = try TwoTodoStores()
        defer { files.remove() }
        let h = try harness(store: files.store)
        try h.onQueue {
            try files.other.write(Self.sameMoveAndAnInsert)
            if checkedBeforeTheMove { try files.store.checkForExternalCommits() }
            try h.controller.moveItem(from: ItemPath(section: 0, item: 2), to: ItemPath(section: 0, item: 0))
        }
        try files.store.checkForExternalCommits()
        #expect(try h.deliveries() == Self.expected)
    }

    /// Another controller made the very same drag a moment before (another window): the
    /// second move writes nothing and its controller still ends on the store's state.
    @Test func anotherControllerMadeTheSameDrag() throws {
        let h = try harness()
        let twin = try ResultsController(store: h.store, request: h.controller.request, deliveryQueue: DispatchQueue(label: "twin"))
        try h.onQueue {
            try twin.deliveryQueue.sync {
                try twin.moveItem(from: ItemPath(section: 0, item: 0), to: ItemPath(section: 1, item: 1))
            }
            try h.store.write { db in try db.todo("d", in: try db.list(named: "Work")) }
            try h.controller.moveItem(from: ItemPath(section: 0, item: 0), to: ItemPath(section: 1, item: 1))
        }
        #expect(try h.deliveries() == [
            "i>[[0, 0]→[1, 1]] i>~[[1, 1]] (user move) | Work[b c] Home[x a y]",
            "i+[[0, 2]] | Work[b c d] Home[x a y]",
        ])
        twin.waitForDeliveries()
        #expect(twin.snapshot == h.controller.snapshot)
    }
}
