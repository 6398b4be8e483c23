import Dispatch
import Foundation
import GRDB
import Testing

@testable import Strata

// User moves are exact (see Docs/Decisions.md, "A user edit is delivered before it returns,
// marked, and later batches build on it" and "A move the request cannot represent is
// refused, never approximated"): after `moveItem` the controller equals a fresh fetch, every
// batch replays on the snapshot before it, and an accepted move is followed by no batch of
// its own, whatever another writer commits while the user drags, and in lists that mix
// several parents' children.

/// A flat list of every list's todos, by the list's `position` (its rank), then the user's
/// order: lists of equal rank mix their todos.
let todosByRank = ResultsRequest<Todo, NoSection>(sortedBy: [Todo.list.position.ascending, Todo.listPosition.ascending])

// MARK: - Lists that mix parents

@Suite struct MixedParentMoveTests {
    /// Lists A and B of ranks `a` and `b`, with todos a1 a2 and b1 b2 (ids 1 2 3 4), each
    /// list's todos at 1 and 2 × 65,536.
    func harness(ranks a: Int, _ b: Int) throws -> TodoHarness<NoSection> {
        try TodoHarness(todosByRank) { db in
            let listA = try db.list("A", position: a)
            let listB = try db.list("B", position: b)
            for title in ["a1", "a2"] { try db.todo(title, in: listA) }
            for title in ["b1", "b2"] { try db.todo(title, in: listB) }
        }
    }

    func move(_ h: TodoHarness<NoSection>, _ from: Int, _ to: Int) throws {
        try h.move(ItemPath(section: 0, item: from), ItemPath(section: 0, item: to))
    }

    /// Equal ranks: the todos interleave by position, then id. A drop between rows of two
    /// parents is accepted when a position of the moved row alone gives the order shown, and
    /// then nothing follows the user's move; otherwise it is refused and nothing is written.
    @Test func equalRanks() throws {
        let h = try harness(ranks: 0, 0)
        #expect(h.text == "[a1 b1 a2 b2]")
        // a2 between a1 and b1: the position of both, between them by id.
        try move(h, 2, 1)
        // b2 between a2 and b1: after a2 needs b1's position at least, before b1 less.
        #expect(throws: ResultsEditError.mixedParents) { try move(h, 3, 2) }
        // b2 first: before a1, whose list is another.
        try move(h, 3, 0)
        // b1 between b2 and a1.
        try move(h, 3, 1)
        #expect(try h.deliveries() == [
            "i>[[0, 2]→[0, 1]] (user move) | [a1 a2 b1 b2]",
            "i>[[0, 3]→[0, 0]] (user move) | [b2 a1 a2 b1]",
            "i>[[0, 3]→[0, 1]] (user move) | [b2 b1 a1 a2]",
        ])
        #expect(h.writes.withLock { $0 } == [1, 1, 1])
    }

    /// Unequal ranks: each list's todos are contiguous; a drop inside another list's todos is
    /// refused, a drop at the edge of its own list accepted.
    @Test func unequalRanks() throws {
        let h = try harness(ranks: 0, 1)
        #expect(h.text == "[a1 a2 b1 b2]")
        #expect(throws: ResultsEditError.mixedParents) { try move(h, 3, 1) }
        #expect(throws: ResultsEditError.mixedParents) { try move(h, 0, 3) }
        try move(h, 0, 1)   // a1 after a2, before b1
        try move(h, 2, 3)   // b1 last
        #expect(try h.deliveries() == [
            "i>[[0, 0]→[0, 1]] (user move) | [a2 a1 b1 b2]",
            "i>[[0, 2]→[0, 3]] (user move) | [a2 a1 b2 b1]",
        ])
    }
}

// MARK: - Property tests

@Suite struct ExactMovePropertyTests {
    /// How another writer's commit lands between the user's drop and `moveItem`.
    enum Race: CaseIterable {
        case none
        /// Through the same store, its delivery waiting behind the drag.
        case sameStore
        /// Another controller of the same store makes the same drag first (it already
        /// satisfies the drop), sometimes followed by another commit.
        case sameStoreSameMove
        /// Through another store on the file, which this store learns of only afterwards.
        case otherStore
        /// Another store's controller makes the same drag first.
        case otherStoreSameMove
        /// Through another store, learnt of before the move (its delivery waiting).
        case otherStoreChecked
    }

    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func byList(seed: UInt64) throws {
        try run(seed: seed, Todo.Fetches.byList, acrossSections: true)
    }

    /// Every list is a section, its todos by position descending: moves are placed in that
    /// order, not the store's reversed.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func byListDescending(seed: UInt64) throws {
        try run(seed: seed, todosByListDescending, acrossSections: true)
    }

    /// Keyed sections (done or not), todos by their list's rank, then the user's order.
    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func byDone(seed: UInt64) throws {
        try run(seed: seed, Todo.Fetches.byDone, acrossSections: false)
    }

    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func flatByRank(seed: UInt64) throws {
        try run(seed: seed, todosByRank, acrossSections: false)
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func flatByRankDescending(seed: UInt64) throws {
        let request = ResultsRequest<Todo, NoSection>(
            sortedBy: [Todo.list.position.descending, Todo.listPosition.descending])
        try run(seed: seed, request, acrossSections: false)
    }

    /// Every list's todos by position only, then title: all parents mix.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func flatByPositionThenTitle(seed: UInt64) throws {
        let request = ResultsRequest<Todo, NoSection>(sortedBy: [Todo.listPosition.ascending, Todo.title.ascending])
        try run(seed: seed, request, acrossSections: false)
    }

    /// One commit of another writer: returns the todos whose place it may change: those
    /// whose parent, position (a rebalance renumbers siblings), list rank, title or done
    /// changed, and the deleted ones.
    static func otherCommit(_ db: Database, choice: Int, pick: Int, counter: Int) throws -> Set<Todo.ID> {
        func state() throws -> [Int64: [DatabaseValue]] {
            let rows = try GRDB.Row.fetchAll(db, sql: """
                SELECT t.id, t.listID, t.listPosition, t.done, t.title, l.position FROM Todo AS t \
                LEFT JOIN TodoList AS l ON l.id = t.listID
                """)
            return Dictionary(uniqueKeysWithValues: rows.map { row in
                (row[0] as Int64, (1..<row.count).map { row[$0] as DatabaseValue })
            })
        }
        let before = try state()
        try change(db, choice: choice, pick: pick, counter: counter)
        let after = try state()
        return Set(before.filter { after[$0.key] != $0.value }.keys.map(Todo.ID.init(rawValue:)))
    }

    private static func change(_ db: Database, choice: Int, pick: Int, counter: Int) throws {
        let lists = try TodoList.order(Column("id")).fetchAll(db)
        let todos = try Todo.order(Column("id")).fetchAll(db)
        guard !lists.isEmpty, !todos.isEmpty else { return }
        let list = lists[pick % lists.count], todo = todos[pick % todos.count]
        switch choice {
        case 0:
            let new = try db.todo("n\(counter)", in: list)
            let count = try db.fetchOrdered(TodoList.todos, of: list.id).count
            try db.move(new.id, in: TodoList.todos, of: list.id, to: (pick / 5) % count)
        case 1:
            _ = try db.delete(Todo.self, id: todo.id)
        case 2:
            try db.append(todo.id, to: TodoList.todos, of: lists[(pick / 3) % lists.count].id)
        case 3:
            var changed = todo
            changed.done.toggle()
            try db.update(changed)
        case 4:
            // The list's rank: its todos move together.
            var changed = list
            changed.position = (changed.position + 1) % 2
            try db.update(changed)
        case 5:
            var changed = todo
            changed.title += "'"
            try db.update(changed)
        default:
            if let parent = todo.listID { try db.move(todo.id, in: TodoList.todos, of: parent, to: 0) }
        }
    }

    func run<Section>(
        seed: UInt64, _ request: ResultsRequest<Todo, Section>, acrossSections: Bool,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        var random = SeededGenerator(seed: seed)
        let files = try TwoTodoStores()
        defer { files.remove() }
        let ranks = (0..<3).map { _ in Int.random(in: 0..<2, using: &random) }
        let done = (0..<15).map { _ in Int.random(in: 0..<4, using: &random) == 0 }
        let h = try TodoHarness(store: files.store, request) { db in
            for l in 0..<3 {
                let list = try db.list("L\(l)", position: ranks[l])
                for t in 0..<5 {
                    var todo = try db.todo("t\(l)-\(t)", in: list)
                    if done[l * 5 + t] {
                        todo.done = true
                        try db.update(todo)
                    }
                }
            }
        }
        let twin = try ResultsController(store: files.store, request: request, deliveryQueue: DispatchQueue(label: "twin"))
        let otherTwin = try ResultsController(
            store: files.other, request: request, deliveryQueue: DispatchQueue(label: "other twin"))
        var counter = 0
        var accepted = 0, refused = 0
        for step in 0..<60 {
            let context = "seed \(seed), step \(step)"
            try files.other.checkForExternalCommits()
            twin.waitForDeliveries()
            otherTwin.waitForDeliveries()
            let shown = h.controller.snapshot
            #expect(twin.snapshot == shown, "\(context): the twin is behind", sourceLocation: sourceLocation)
            #expect(otherTwin.snapshot == shown, "\(context): the other store's twin is behind", sourceLocation: sourceLocation)

            let paths = shown.sections.indices.flatMap { s in shown.sections[s].rows.indices.map { ItemPath(section: s, item: $0) } }
            guard !paths.isEmpty else { break }
            let source = paths.randomElement(using: &random)!
            let section = acrossSections ? Int.random(in: 0..<shown.numberOfSections, using: &random) : source.section
            var count = shown.numberOfRows(inSection: section)
            if section == source.section { count -= 1 }
            let destination = ItemPath(section: section, item: Int.random(in: 0...count, using: &random))
            var expected = itemIDs(shown)
            let id = expected[source.section].remove(at: source.item)
            expected[destination.section].insert(id, at: destination.item)
            let neighbours = Set(
                [destination.item - 1, destination.item + 1].filter { expected[destination.section].indices.contains($0) }
                    .map { expected[destination.section][$0] })

            let race = Race.allCases.randomElement(using: &random)!
            let choice = Int.random(in: 0..<7, using: &random), pick = Int.random(in: 0..<10_000, using: &random)
            let alsoAnotherCommit = Bool.random(using: &random)
            counter += 1
            let n = counter
            var touched: Set<Todo.ID> = []
            let writesBefore = h.writes.withLock { $0.count }
            let updatesBefore = h.recorder.updates.count
            var refusal: ResultsEditError? = nil
            try h.onQueue {
                switch race {
                case .none:
                    break
                case .sameStore:
                    touched = try files.store.write { db in try Self.otherCommit(db, choice: choice, pick: pick, counter: n) }
                case .sameStoreSameMove:
                    twin.deliveryQueue.sync { _ = try? twin.moveItem(from: source, to: destination) }
                    if alsoAnotherCommit {
                        touched = try files.store.write { db in try Self.otherCommit(db, choice: choice, pick: pick, counter: n) }
                    }
                case .otherStore, .otherStoreChecked:
                    touched = try files.other.write { db in try Self.otherCommit(db, choice: choice, pick: pick, counter: n) }
                    if race == .otherStoreChecked { try files.store.checkForExternalCommits() }
                case .otherStoreSameMove:
                    otherTwin.deliveryQueue.sync { _ = try? otherTwin.moveItem(from: source, to: destination) }
                    if alsoAnotherCommit {
                        touched = try files.other.write { db in try Self.otherCommit(db, choice: choice, pick: pick, counter: n) }
                    }
                }
                do {
                    try h.controller.moveItem(from: source, to: destination)
                } catch let error as ResultsEditError {
                    refusal = error
                }
            }
            try files.store.checkForExternalCommits()
            h.controller.waitForDeliveries()
            // Every batch replays on the snapshot before it; the controller equals a fresh fetch.
            let delivered = try h.deliveries(sourceLocation: sourceLocation)
            if ProcessInfo.processInfo.environment["STRATA_TRACE_EDITS"] != nil {
                print(context, race, source, "→", destination, refusal.map { "\($0)" } ?? "accepted", delivered)
            }
            if source == destination { continue }
            if let refusal {
                refused += 1
                if race == .none {
                    // Only a list that mixes parents refuses a drop inside a section.
                    #expect(refusal == .mixedParents, "\(context): \(refusal)", sourceLocation: sourceLocation)
                    #expect(delivered.isEmpty, "\(context): a refusal delivered \(delivered)", sourceLocation: sourceLocation)
                    #expect(h.writes.withLock { $0.count } == writesBefore, "\(context): a refusal wrote", sourceLocation: sourceLocation)
                }
                continue
            }
            accepted += 1
            #expect(delivered.first?.contains("(user move)") == true, "\(context): \(delivered)", sourceLocation: sourceLocation)
            if race == .none {
                // No echo: the store's order is the one the user's move showed.
                #expect(delivered.count == 1, "\(context): \(delivered)", sourceLocation: sourceLocation)
                #expect(itemIDs(h.controller.snapshot) == expected, "\(context)", sourceLocation: sourceLocation)
            } else {
                // Rows the other writer left alone keep the order the user's move showed (the
                // moved row too, unless the rows it was dropped between were changed).
                // Checked on every snapshot delivered, so that a row that moves back and
                // forth is caught too.
                var excluded = touched
                if !touched.isDisjoint(with: neighbours) { excluded.insert(id) }
                let final = itemIDs(h.controller.snapshot).flatMap { $0 }
                let common = Set(final).intersection(expected.flatMap { $0 }).subtracting(excluded)
                for update in h.recorder.updates.dropFirst(updatesBefore) {
                    #expect(
                        itemIDs(update.snapshot).flatMap { $0 }.filter(common.contains)
                            == expected.flatMap { $0 }.filter(common.contains),
                        "\(context): \(race) moved rows it did not touch: \(delivered)", sourceLocation: sourceLocation)
                }
            }
        }
        print("seed \(seed): \(accepted) moves accepted, \(refused) refused")
        #expect(accepted > 20, "seed \(seed): only \(accepted) moves accepted", sourceLocation: sourceLocation)
    }
}
