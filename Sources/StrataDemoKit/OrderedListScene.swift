import Dispatch
import Foundation
import Strata

/// The scene of lists the user orders by hand (Models/Todos.yaml): a results controller on
/// `Todo.Fetches.byList`, and a list view simulated as UIKit behaves — it moves a dragged row
/// itself, then reports the move; it deletes a swiped row only when the batch says so.
final class OrderedListScene {
    private let session: DemoSession
    private let queue = DispatchQueue(label: "StrataDemo.todos")
    let controller: ResultsController<Todo, TodoList>
    private let recorder = TodoRecorder()
    /// What the simulated list view shows.
    private var view: ResultsSnapshot<Todo, TodoList> = .empty

    init(session: DemoSession) throws {
        self.session = session
        try session.store.write { db in
            let today = try db.insert(TodoList(name: "Today", position: 0))
            let later = try db.insert(TodoList(name: "Later", position: 1))
            for title in ["Buy milk", "Call the bank", "Water the plants"] {
                try db.insert(Todo(title: title, listID: today.id))  // each goes last
            }
            try db.insert(Todo(title: "Book flights", listID: later.id))
            try db.insert(Todo(title: "Renew passport", listID: later.id))
        }
        controller = try ResultsController(store: session.store, request: Todo.Fetches.byList, deliveryQueue: queue)
        controller.coordinate(recorder)
        controller.waitForDeliveries()
        view = recorder.drain().last?.snapshot ?? controller.snapshot
    }

    func run() {
        session.stepNumber += 1
        let output = session.output
        output.line(session.header("\(session.stepNumber). Fetch: todos by list, in the order the user gave them"))
        session.say(
            "Todo.Fetches.byList: a section per TodoList, todos by list.@position (TodoList.todos is ordered: true). The list view below is a simulated UITableView.")
        for line in lines(of: view) { output.line(line) }
        output.line()

        drag(
            "Drag a todo within its list",
            explain: ["\"Buy milk\" is dragged from first to last in Today. The view moves the row, then calls controller.moveItem(from: [0, 0], to: [0, 2]): one UPDATE of one row."],
            from: ItemPath(section: 0, item: 0), to: ItemPath(section: 0, item: 2))
        drag(
            "Drag a todo into another list",
            explain: ["\"Call the bank\" is dropped into Later, between its two todos: the move re-parents it (listID) and places it, in one write."],
            from: ItemPath(section: 0, item: 0), to: ItemPath(section: 1, item: 1))
        drag(
            "A commit lands while the user drags",
            explain: ["Another writer adds \"Pay rent\" first in Today; its batch is not delivered yet when the user drops \"Buy milk\" first. The move goes by identity, and the insert comes next, relative to the moved list."],
            from: ItemPath(section: 0, item: 1), to: ItemPath(section: 0, item: 0)
        ) {
            try self.session.store.write { db in
                let today = try db.fetchAll(TodoList.Fetches.all).first { $0.name == "Today" }!
                let todo = try db.insert(Todo(title: "Pay rent", listID: today.id))
                try db.insert(todo.id, into: TodoList.todos, of: today.id, at: 0)
            }
        }
        drag(
            "A move the list cannot represent is refused",
            explain: ["A drop past the end of Today: ResultsEditError, nothing written; the view shows controller.snapshot again."],
            from: ItemPath(section: 0, item: 0), to: ItemPath(section: 0, item: 3))
        swipe(
            "Swipe to delete",
            explain: ["\"Book flights\" is swiped away: controller.deleteItem(at: [1, 0]) deletes it and delivers the row's delete, which the view animates."],
            at: ItemPath(section: 1, item: 0))
    }

    // MARK: - Steps

    /// The view moves the row, then reports the move (after `concurrently`, a write from
    /// elsewhere whose batch is not yet delivered).
    private func drag(
        _ title: String, explain: [String], from source: ItemPath, to destination: ItemPath,
        concurrently: (() throws -> Void)? = nil
    ) {
        var record = StepRecord(title: title)
        begin(title, explain)
        let before = view
        view = Self.moving(view, from: source, to: destination)
        let item = before[source].item!
        session.output.line("view   moves \(item.title) \(source)→\(destination), then calls moveItem(from:to:)")
        do {
            try queue.sync {
                try concurrently?()
                try controller.moveItem(from: source, to: destination)
            }
        } catch {
            record.error = nil
            record.refusal = "\(error)"
            for line in wrapped("refused: \(error)") { session.output.line(line) }
            view = controller.snapshot
            session.output.line("view   reloads controller.snapshot: the row goes back")
        }
        finish(&record)
    }

    private func swipe(_ title: String, explain: [String], at path: ItemPath) {
        var record = StepRecord(title: title)
        begin(title, explain)
        session.output.line("view   reports the swipe: deleteItem(at: \(path))")
        do {
            try queue.sync { try controller.deleteItem(at: path) }
        } catch {
            record.error = "\(error)"
            session.output.line("error: \(error)")
        }
        finish(&record)
    }

    private func begin(_ title: String, _ explain: [String]) {
        session.stepNumber += 1
        session.output.line(session.header("\(session.stepNumber). \(title)"))
        for line in explain { for part in wrapped("  " + line, indent: "  ") { session.output.line(part) } }
    }

    /// Prints and applies what the controller delivered, as the table view adapter of the
    /// DocC article does: a user move is already shown, anything else is animated.
    private func finish(_ record: inout StepRecord) {
        controller.waitForDeliveries()
        let updates = recorder.drain()
        if updates.isEmpty { session.output.line("batch  none") }
        var marks: [ItemPath: String] = [:]
        for update in updates {
            guard case .batch(let batch, let snapshot) = update else { continue }
            record.batches.append(batch)
            session.output.line("batch  \(batch)")
            if batch.userEdit == .move {
                // The view already shows the move: take the snapshot, animate nothing.
                let same = Self.ids(view) == Self.ids(snapshot)
                if !same { record.consistent = false }
                session.output.line("       already shown by the view" + (same ? "" : " (MISMATCH)") + ": it takes the snapshot")
                view = snapshot
                marks = [:]
                for move in batch.itemMoves { marks[move.to] = ">" }
                for path in batch.movedAndUpdatedItems { marks[path] = ">~" }
            } else {
                do {
                    view = try batch.apply(to: view, reading: snapshot)
                    if view != snapshot { record.consistent = false }
                } catch {
                    record.consistent = false
                    session.output.line("INVALID BATCH: \(error)")
                    view = snapshot
                }
                session.output.line("       the view animates it")
                marks = [:]
                for path in batch.itemInserts { marks[path] = "+" }
                for move in batch.itemMoves { marks[move.to] = ">" }
            }
        }
        let agrees = view == controller.snapshot
        if !agrees { record.consistent = false }
        session.output.line("view   " + (agrees ? "== controller.snapshot" : "!= controller.snapshot (MISMATCH)"))
        for line in lines(of: view, marks: marks) { session.output.line(line) }
        let stored = (try? session.store.read { db in
            try db.fetchAll(TodoList.Fetches.all).map { list in
                "\(list.name): " + (try db.fetchOrdered(TodoList.todos, of: list.id).map { "#\($0.id)" }.joined(separator: " "))
            }
        }) ?? []
        session.output.line("stored " + stored.joined(separator: "; "))
        session.output.line()
        session.records.append(record)
    }

    // MARK: - Rendering

    private func lines(of snapshot: ResultsSnapshot<Todo, TodoList>, marks: [ItemPath: String] = [:]) -> [String] {
        var lines: [String] = []
        for (s, section) in snapshot.sections.enumerated() {
            let name = section.value.object?.name ?? "(no list)"
            let count = section.items.count
            let detail = count == 0 ? "empty" : count == 1 ? "1 todo" : "\(count) todos"
            lines.append("    " + name + String(repeating: " ", count: max(1, 39 - name.count)) + detail)
            for (r, row) in section.rows.enumerated() {
                guard let todo = row.item else { continue }
                let mark = marks[ItemPath(section: s, item: r)].map { $0.padding(toLength: 3, withPad: " ", startingAt: 0) } ?? "   "
                lines.append(" " + mark + "   #\(todo.id) \(todo.title)")
            }
        }
        return lines
    }

    private static func ids(_ snapshot: ResultsSnapshot<Todo, TodoList>) -> [[Todo.ID]] {
        snapshot.sections.map { $0.items.map(\.id) }
    }

    /// `snapshot` with the row at `source` moved to `destination`, as UIKit moves it.
    static func moving(
        _ snapshot: ResultsSnapshot<Todo, TodoList>, from source: ItemPath, to destination: ItemPath
    ) -> ResultsSnapshot<Todo, TodoList> {
        var rows = snapshot.sections.map(\.rows)
        guard source.section < rows.count, source.item < rows[source.section].count,
              destination.section < rows.count
        else { return snapshot }
        let row = rows[source.section].remove(at: source.item)
        rows[destination.section].insert(row, at: min(destination.item, rows[destination.section].count))
        return ResultsSnapshot(sections: snapshot.sections.enumerated().map { index, section in
            ResultsSection(id: section.id, value: section.value, rows: rows[index])
        })
    }
}

/// Collects the updates the controller delivers.
private final class TodoRecorder: Coordinatable, @unchecked Sendable {
    private let lock = NSLock()
    private var updates: [ResultsUpdate<Todo, TodoList>] = []

    func apply(_ batch: ChangeBatch, snapshot: ResultsSnapshot<Todo, TodoList>) {
        lock.withLock { updates.append(.batch(batch, snapshot)) }
    }

    func reload(_ snapshot: ResultsSnapshot<Todo, TodoList>) {
        lock.withLock { updates.append(.reload(snapshot)) }
    }

    func drain() -> [ResultsUpdate<Todo, TodoList>] {
        lock.withLock {
            defer { updates = [] }
            return updates
        }
    }
}
