import Benchmark
import Dispatch
import Foundation
import GRDB
import Strata

/// One ordered list of `size` todos (`TodoList.todos`, `ordered: true`), under a results
/// controller sorted by `list.@position`. Each iteration makes one random move written with
/// `db.move(_:in:of:after:)` (a random todo right after another random one, or before the
/// first): the rows it writes (checked against the rows of `Todo` the commit updated), the
/// rows a rebalance renumbered, and the time from commit to the delivered batch (which must be
/// one item move); then one random move as a list view reports it,
/// `ResultsController.moveItem(from:to:)` on the delivery queue, timed from call to return
/// (write, edited snapshot, delivery). At the end the stored order must equal the controller's.
final class OrderedListBenchmark {
    static let moveLatency = latency("db.move commit to batch")
    static let moveItemCall = latency("moveItem call")
    static let rowsWritten = count("rows written per move")
    static let rebalanced = count("rows rebalanced per move")

    let folder: URL
    let store: Store
    let list: TodoList
    let probe: LatencyProbe
    let written = LockedCounter()
    let observation: CommitObservation
    let deliveries = DispatchQueue(label: "strata.benchmarks.ordered")
    let controller: ResultsController<Todo, TodoList>
    let forwarder: TodoBatchForwarder
    var random = SplitMix64(seed: 11)

    init(size: Int, loading: ResultsLoading) throws {
        folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("strata-benchmarks-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        store = try Store(schema: TodosModel.schema, path: folder.appendingPathComponent("todos.sqlite").path)
        list = try store.write { db -> TodoList in
            let list = try db.insert(TodoList(name: "Inbox"))
            // The insert trigger gives each todo the last place.
            let statement = try db.makeStatement(sql: "INSERT INTO Todo (title, done, listID) VALUES (?, 0, ?)")
            for index in 0..<size { try statement.execute(arguments: ["todo \(index)", list.id.rawValue]) }
            return list
        }
        probe = LatencyProbe(store: store)
        let written = self.written
        observation = store.observeCommits { changes in written.set(changes.tables["Todo"]?.updated.count ?? 0) }
        controller = try ResultsController(store: store, request: Todo.Fetches.byList, loading: loading, deliveryQueue: deliveries)
        forwarder = TodoBatchForwarder(probe: probe)
        controller.coordinate(forwarder)
        controller.waitForDeliveries()
    }

    /// A random move through the store: commit → batch, rows written, rows rebalanced.
    func storeMove() throws -> (nanoseconds: UInt64, rowsWritten: Int, rebalanced: Int) {
        while true {
            let items = controller.snapshot.sections[0].rows
            let index = Int.random(in: 0..<items.count, using: &random)
            let child = items[index].item!.id
            let target = Int.random(in: 0..<items.count, using: &random)
            let sibling = items[target].item!.id
            // Skip the moves that leave the order as it is (no batch is delivered).
            if target == index || (target > 0 && index == target + 1) { continue }
            let list = self.list
            let write = try store.write { db in
                target == 0
                    ? try db.move(child, in: TodoList.todos, of: list.id, before: sibling)
                    : try db.move(child, in: TodoList.todos, of: list.id, after: sibling)
            }
            let (nanoseconds, batch) = probe.waitForBatch()
            guard batch.itemMoves.count == 1 else { throw BenchmarkError.unexpectedBatch("a move is one moved row: \(batch)") }
            guard written.value == write.rowsWritten else {
                throw BenchmarkError.resultsDiffer("rows written: \(written.value) vs \(write.rowsWritten)")
            }
            controller.waitForDeliveries()
            return (nanoseconds, write.rowsWritten, write.didRebalance ? write.rebalancedRows : 0)
        }
    }

    /// A random move as a list view reports it, on the delivery queue: the call's duration.
    func userMove() throws -> UInt64 {
        while true {
            let count = controller.snapshot.numberOfRows(inSection: 0)
            let from = ItemPath(section: 0, item: Int.random(in: 0..<count, using: &random))
            let to = ItemPath(section: 0, item: Int.random(in: 0..<count, using: &random))
            if from == to { continue }
            let controller = self.controller
            let duration = try deliveries.sync { try timed { try controller.moveItem(from: from, to: to) } }
            controller.waitForDeliveries()
            return duration
        }
    }

    /// The stored order must equal the controller's; removes the store.
    func finish() throws {
        defer {
            observation.cancel()
            try? store.close()
            try? FileManager.default.removeItem(at: folder)
        }
        let list = self.list
        let stored = try store.read { db in try db.fetchOrdered(TodoList.todos, of: list.id).map(\.id) }
        guard stored == controller.snapshot.sections[0].items.map(\.id) else { throw BenchmarkError.resultsDiffer("stored order") }
    }
}

func registerOrderedList(size: Int) {
    for (name, loading) in [("Eager", ResultsLoading.eager), ("Batched", .batched())] {
        let fixture = Fixture<OrderedListBenchmark>()
        Benchmark(
            "OrderedList.\(formatCount(size)).\(name)",
            configuration: .with(
                [
                    OrderedListBenchmark.moveLatency, OrderedListBenchmark.moveItemCall, OrderedListBenchmark.rowsWritten,
                    OrderedListBenchmark.rebalanced, .mallocCountTotal,
                ],
                Runs(warmUp: 5, measured: 1_000, maxDuration: .seconds(300)),
                setup: { fixture.set(try OrderedListBenchmark(size: size, loading: loading)) },
                teardown: {
                    try fixture.value.finish()
                    fixture.set(nil)
                })
        ) { benchmark in
            let fixture = fixture.value
            let move = try fixture.storeMove()
            benchmark.record(OrderedListBenchmark.moveLatency, nanoseconds: move.nanoseconds)
            benchmark.measurement(OrderedListBenchmark.rowsWritten, move.rowsWritten)
            benchmark.measurement(OrderedListBenchmark.rebalanced, move.rebalanced)
            benchmark.record(OrderedListBenchmark.moveItemCall, nanoseconds: try fixture.userMove())
        }
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
