import Dispatch
import Foundation
import GRDB
import Strata

/// One ordered list of `size` todos (`TodoList.todos`, `ordered: true`), under a results
/// controller sorted by `list.@position`; `moves` random moves, each to a random place:
/// the rows each move writes, how often a rebalance runs, the time from commit to the
/// delivered batch, and the time `ResultsController.moveItem(from:to:)` takes on the
/// delivery queue (write, edited snapshot, delivery).
struct OrderedListBenchmark {
    struct Figures {
        var size: Int
        var moves: Int
        var loading: ResultsLoading = .eager
        var rowsWritten: [Int]
        var rebalances: Int
        var largestRebalance: Int
        /// Commit → batch, for moves written with `db.move(_:in:of:after:)`.
        var latency: Samples
        /// `moveItem(from:to:)` from call to return, for the same number of moves.
        var userMoves: Samples
        var userMoveRows: [Int]
    }

    let size: Int
    let moves: Int
    var loading: ResultsLoading = .eager

    func run() throws -> Figures {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("strata-benchmarks-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Store(schema: TodosModel.schema, path: folder.appendingPathComponent("todos.sqlite").path)
        let list = try store.write { db -> TodoList in
            let list = try db.insert(TodoList(name: "Inbox"))
            // The insert trigger gives each todo the last place.
            let statement = try db.makeStatement(sql: "INSERT INTO Todo (title, done, listID) VALUES (?, 0, ?)")
            for index in 0..<size { try statement.execute(arguments: ["todo \(index)", list.id.rawValue]) }
            return list
        }
        let probe = LatencyProbe(store: store)
        let written = LockedCounter()
        let observation = store.observeCommits { changes in written.set(changes.tables["Todo"]?.updated.count ?? 0) }
        defer { observation.cancel() }
        let deliveries = DispatchQueue(label: "strata.benchmarks.ordered")
        let controller = try ResultsController(
            store: store, request: Todo.Fetches.byList, loading: loading, deliveryQueue: deliveries)
        let forwarder = TodoBatchForwarder(probe: probe)
        controller.coordinate(forwarder)
        controller.waitForDeliveries()

        var random = SplitMix64(seed: 11)
        var figures = Figures(
            size: size, moves: moves, loading: loading, rowsWritten: [], rebalances: 0, largestRebalance: 0,
            latency: Samples(), userMoves: Samples(), userMoveRows: [])
        // Moves through the store: a random todo right after another random one (or first).
        for _ in 0..<moves {
            let items = controller.snapshot.sections[0].rows
            let index = Int.random(in: 0..<items.count, using: &random)
            let child = items[index].item!.id
            let target = Int.random(in: 0..<items.count, using: &random)
            let sibling = items[target].item!.id
            // Skip the moves that leave the order as it is (no batch is delivered).
            if target == index || (target > 0 && index == target + 1) { continue }
            let write = try store.write { db in
                target == 0
                    ? try db.move(child, in: TodoList.todos, of: list.id, before: sibling)
                    : try db.move(child, in: TodoList.todos, of: list.id, after: sibling)
            }
            let (nanoseconds, batch) = probe.waitForBatch()
            precondition(batch.itemMoves.count == 1, "a move is one moved row: \(batch)")
            precondition(written.value == write.rowsWritten, "rows written: \(written.value) vs \(write.rowsWritten)")
            figures.latency.nanoseconds.append(nanoseconds)
            figures.rowsWritten.append(write.rowsWritten)
            if write.didRebalance {
                figures.rebalances += 1
                figures.largestRebalance = max(figures.largestRebalance, write.rebalancedRows)
            }
            controller.waitForDeliveries()
        }
        // Moves as a list view reports them, on the delivery queue.
        for _ in 0..<moves {
            let count = controller.snapshot.numberOfRows(inSection: 0)
            let from = ItemPath(section: 0, item: Int.random(in: 0..<count, using: &random))
            let to = ItemPath(section: 0, item: Int.random(in: 0..<count, using: &random))
            if from == to { continue }
            let duration = try deliveries.sync { try timed { try controller.moveItem(from: from, to: to) } }
            figures.userMoves.nanoseconds.append(duration)
            figures.userMoveRows.append(written.value)
            controller.waitForDeliveries()
        }
        // The stored order equals the controller's.
        let stored = try store.read { db in try db.fetchOrdered(TodoList.todos, of: list.id).map(\.id) }
        precondition(stored == controller.snapshot.sections[0].items.map(\.id), "stored order differs")
        _ = forwarder
        return figures
    }
}

/// The rows of `Todo` the last commit updated.
final class LockedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var _value = 0
    var value: Int { lock.withLock { _value } }
    func set(_ value: Int) { lock.withLock { _value = value } }
}

/// Hands the controller's batches to the probe (user moves deliver their batch themselves).
final class TodoBatchForwarder: Coordinatable, @unchecked Sendable {
    typealias Item = Todo
    typealias Section = TodoList
    let probe: LatencyProbe
    init(probe: LatencyProbe) { self.probe = probe }
    func apply(_ batch: ChangeBatch, snapshot: ResultsSnapshot<Todo, TodoList>) {
        if batch.userEdit == nil { probe.batchDidArrive(batch) }
    }
    func reload(_ snapshot: ResultsSnapshot<Todo, TodoList>) {}
}

extension OrderedListBenchmark.Figures {
    func printReport() {
        let mean = Double(rowsWritten.reduce(0, +)) / Double(max(rowsWritten.count, 1))
        let userMean = Double(userMoveRows.reduce(0, +)) / Double(max(userMoveRows.count, 1))
        let mode = loading == .eager ? "eager" : "batched"
        print("Ordered list: \(size) todos in one list (`Todo.Fetches.byList`, sorted by `list.@position`, \(mode) loading), \(moves) random moves each way")
        print("")
        print("| moves | rows written per move: mean | max | moves with a rebalance | largest rebalance (rows) | commit → batch: median | p90 | max |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        print(
            "| `db.move(_:in:of:after:)` | \(String(format: "%.4f", mean)) | \(rowsWritten.max() ?? 0) | \(rebalances) (\(String(format: "%.2f", Double(rebalances) * 100 / Double(max(rowsWritten.count, 1))))%) | \(largestRebalance) | \(formatMilliseconds(latency.medianMilliseconds)) | \(formatMilliseconds(latency.percentile(0.9))) | \(formatMilliseconds(latency.percentile(1))) |"
        )
        print("")
        print("| moves | rows written per move: mean | max | `moveItem(from:to:)` call: median | p90 | max |")
        print("| --- | ---: | ---: | ---: | ---: | ---: |")
        print(
            "| `controller.moveItem(from:to:)` | \(String(format: "%.4f", userMean)) | \(userMoveRows.max() ?? 0) | \(formatMilliseconds(userMoves.medianMilliseconds)) | \(formatMilliseconds(userMoves.percentile(0.9))) | \(formatMilliseconds(userMoves.percentile(1))) |"
        )
        print("")
    }
}
