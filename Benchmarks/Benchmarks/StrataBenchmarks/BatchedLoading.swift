import Benchmark
import Dispatch
import Foundation
import GRDB
import Strata

/// Batched loading (`ResultsLoading.batched`) beside plain GRDB and the eager controller:
/// opening, memory held, a one-row change, and reading rows as a scrolling list does.
enum BatchedLoadingBenchmark {
    static let pageSize = 64
    static let cachedPages = 32
    static var loading: ResultsLoading { .batched(pageSize: pageSize, cachedPages: cachedPages) }
}

func registerBatchedLoading(size: Int) {
    let label = formatCount(size)
    let loading = BatchedLoadingBenchmark.loading
    let deliveries = DispatchQueue(label: "strata.benchmarks.batched")
    let database = Fixture<NotesDatabase>()
    let setup: Benchmark.BenchmarkSetupHook = { database.set(try NotesDatabase(noteCount: size)) }
    let teardown: Benchmark.BenchmarkTeardownHook = {
        database.value.remove()
        database.set(nil)
    }
    let openRuns = size >= 1_000_000 ? Runs(warmUp: 1, measured: 3) : Runs(warmUp: 1, measured: 7)
    // Held: the requested bytes allocated and not freed while the controller was created (it is
    // still alive when the measurement stops), that is, what it holds.
    let openMetrics: [BenchmarkMetric] = [.wallClock, .cpuTotal, .mallocCountTotal, .memoryLeakedBytes, .peakMemoryResident]

    // Open: controller init and the first page read, against plain GRDB fetchAll of the full
    // records in the same order.
    Benchmark(
        "BatchedOpen.\(label).Batched", configuration: .with(openMetrics, openRuns, setup: setup, teardown: teardown)
    ) { benchmark in
        benchmark.startMeasurement()
        let controller = try ResultsController(
            store: database.value.store, request: Note.Fetches.byNotebook, loading: loading, deliveryQueue: deliveries)
        blackHole(controller.snapshot[ItemPath(section: 0, item: 0)])
        benchmark.stopMeasurement()
        withExtendedLifetime(controller) {}
    }
    Benchmark(
        "BatchedOpen.\(label).Eager", configuration: .with(openMetrics, openRuns, setup: setup, teardown: teardown)
    ) { benchmark in
        benchmark.startMeasurement()
        let controller = try ResultsController(store: database.value.store, request: Note.Fetches.byNotebook, deliveryQueue: deliveries)
        benchmark.stopMeasurement()
        withExtendedLifetime(controller) {}
    }
    Benchmark(
        "BatchedOpen.\(label).GRDB", configuration: .with(openMetrics, openRuns, setup: setup, teardown: teardown)
    ) { benchmark in
        benchmark.startMeasurement()
        let notes = try database.value.store.read { db in
            try Note.order(Column("pinned").desc, Column("title"), Column("id")).fetchAll(db)
        }
        benchmark.stopMeasurement()
        guard notes.count == size else { throw BenchmarkError.resultsDiffer("plain fetch found \(notes.count)") }
    }

    // A one-row change on a batched controller that showed its first rows.
    let change = Fixture<(database: NotesDatabase, controller: ResultsController<Note, Notebook>, forwarder: BatchForwarder, driver: ChangeDriver)>()
    Benchmark(
        "BatchedChange.\(label).Strata",
        configuration: .with(
            Change.allCases.map(\.metric) + [.mallocCountTotal], Runs(warmUp: 5, measured: 51),
            setup: {
                let database = try NotesDatabase(noteCount: size)
                let probe = LatencyProbe(store: database.store)
                let controller = try ResultsController(
                    store: database.store, request: Note.Fetches.byNotebook, loading: loading, deliveryQueue: deliveries)
                let forwarder = BatchForwarder(probe: probe)
                controller.coordinate(forwarder)
                controller.waitForDeliveries()
                _ = controller.snapshot[ItemPath(section: 0, item: 0)]  // a list showing its first rows
                change.set((database, controller, forwarder, ChangeDriver(database: database, probe: probe)))
            },
            teardown: {
                let (database, controller, _, _) = change.value
                defer { database.remove() }
                controller.waitForDeliveries()
                // The controller's final state equals an eager fetch.
                let check = try ResultsController(store: database.store, request: Note.Fetches.byNotebook, deliveryQueue: deliveries)
                guard controller.snapshot == check.snapshot else { throw BenchmarkError.resultsDiffer("batched state differs") }
                change.set(nil)
            })
    ) { benchmark in
        for (change, nanoseconds) in try change.value.driver.oneRound() {
            benchmark.record(change.metric, nanoseconds: nanoseconds)
        }
    }

    // Reading rows from a new snapshot: every row in order, and 10,000 random rows; batched
    // (a new controller's snapshot each time, made outside the timed region) against the same
    // reads on an eager snapshot (array reads).
    let readRuns = Runs(warmUp: 1, measured: 4)
    let eager = Fixture<(snapshot: ResultsSnapshot<Note, Notebook>, paths: [ItemPath])>()
    let readSetup: Benchmark.BenchmarkSetupHook = {
        let store = try NotesDatabase(noteCount: size)
        database.set(store)
        let snapshot = try ResultsController(store: store.store, request: Note.Fetches.byNotebook, deliveryQueue: deliveries).snapshot
        var random = SplitMix64(seed: 7)
        let paths = (0..<10_000).map { _ -> ItemPath in
            let section = Int(random.next(upperBound: UInt64(snapshot.numberOfSections)))
            let count = snapshot.numberOfRows(inSection: section)
            return ItemPath(section: section, item: Int(random.next(upperBound: UInt64(count))))
        }
        eager.set((snapshot, paths))
    }
    let readTeardown: Benchmark.BenchmarkTeardownHook = {
        eager.set(nil)
        try await teardown()
    }
    func register(_ name: String, batched: Bool, _ read: @escaping (ResultsSnapshot<Note, Notebook>, [ItemPath]) -> Int) {
        Benchmark(
            "\(name).\(label).\(batched ? "Batched" : "Eager")",
            configuration: .with([.wallClock, .mallocCountTotal], readRuns, setup: readSetup, teardown: readTeardown)
        ) { benchmark in
            let (eagerSnapshot, paths) = eager.value
            let snapshot = batched
                ? try ResultsController(
                    store: database.value.store, request: Note.Fetches.byNotebook, loading: loading, deliveryQueue: deliveries
                ).snapshot
                : eagerSnapshot
            benchmark.startMeasurement()
            let checksum = read(snapshot, paths)
            benchmark.stopMeasurement()
            guard checksum == read(eagerSnapshot, paths) else { throw BenchmarkError.resultsDiffer("batched rows differ from eager rows") }
        }
    }
    let readAll: (ResultsSnapshot<Note, Notebook>, [ItemPath]) -> Int = { snapshot, _ in
        var checksum = 0
        for section in snapshot.sections { for row in section.rows { checksum &+= row.item!.title.utf8.count } }
        return checksum
    }
    let readRandom: (ResultsSnapshot<Note, Notebook>, [ItemPath]) -> Int = { snapshot, paths in
        var checksum = 0
        for path in paths { checksum &+= snapshot[path].item!.title.utf8.count }
        return checksum
    }
    register("BatchedReadAll", batched: true, readAll)
    register("BatchedReadAll", batched: false, readAll)
    register("BatchedReadRandom", batched: true, readRandom)
    register("BatchedReadRandom", batched: false, readRandom)
}
