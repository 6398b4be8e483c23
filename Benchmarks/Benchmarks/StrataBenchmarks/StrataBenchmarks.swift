// Strata's benchmarks on package-benchmark. Each benchmark runs in a process of its own;
// benchmarks come in pairs, Strata beside its baseline, named `<scenario>.<case>.<side>`
// (`OneRowChange.100k.Strata` and `OneRowChange.100k.RefetchDiff`), and `StrataAims` prints the
// ratio of each pair from a stored baseline. See Benchmarks/README.md.
import Benchmark
import Dispatch
import Foundation
import GRDB
import Strata

let benchmarks: @Sendable () -> Void = {
    for size in [10_000, 100_000, 1_000_000] {
        registerOneRowChange(size: size)
        registerManyToMany(size: size)
        registerInitialFetch(size: size)
    }
    registerIdentityDifference(rows: 100_000)
    registerLargeCommits(size: 100_000)
    registerOrderedList(size: 100_000)
    for size in [100_000, 1_000_000] { registerBatchedLoading(size: size) }
    registerHistory(size: 100_000)
}

// MARK: - One-row change

/// The side of a pair that a benchmark measures.
enum Side: String {
    /// A live `ResultsController` (incremental).
    case strata = "Strata"
    /// Refetch everything with plain GRDB and diff by identity on every commit.
    case refetchDiff = "RefetchDiff"
}

/// A store of `size` notes with a live controller of `Note.Fetches.byNotebook`, or the refetch
/// + diff baseline instead, and one-row changes timed from commit to batch.
final class OneRowChangeFixture {
    let database: NotesDatabase
    let probe: LatencyProbe
    let driver: ChangeDriver
    let controller: ResultsController<Note, Notebook>?
    let forwarder: BatchForwarder
    let baseline: RefetchBaseline?

    init(size: Int, side: Side) throws {
        database = try NotesDatabase(noteCount: size)
        let store = database.store
        let deliveries = DispatchQueue(label: "strata.benchmarks.deliveries")
        probe = LatencyProbe(store: store)  // the first commit handler: marks the commit time
        forwarder = BatchForwarder(probe: probe)
        driver = ChangeDriver(database: database, probe: probe)
        switch side {
        case .strata:
            let controller = try ResultsController(store: store, request: Note.Fetches.byNotebook, deliveryQueue: deliveries)
            controller.coordinate(forwarder)
            controller.waitForDeliveries()
            guard controller.snapshot.rowCounts.reduce(0, +) == size else {
                throw BenchmarkError.resultsDiffer("initial snapshot has \(controller.snapshot.rowCounts.reduce(0, +)) rows")
            }
            self.controller = controller
            baseline = nil
        case .refetchDiff:
            controller = nil
            let probe = probe
            baseline = try RefetchBaseline(store: store, deliveryQueue: deliveries) { batch in probe.batchDidArrive(batch) }
        }
    }

    /// Checks that the results equal a plain refetch, and removes the store.
    func finish() throws {
        defer { database.remove() }
        let expected = try database.store.read { db in try RefetchBaseline.fetch(db) }
        if let controller {
            controller.waitForDeliveries()
            guard controller.snapshot == expected else { throw BenchmarkError.resultsDiffer("the controller's results") }
        }
        if let baseline {
            baseline.cancel()
            guard baseline.snapshot == expected else { throw BenchmarkError.resultsDiffer("the baseline's results") }
        }
    }
}

func registerOneRowChange(size: Int) {
    for side in [Side.strata, .refetchDiff] {
        let runs: Runs =
            side == .strata ? Runs(warmUp: 5, measured: 51)
            : size >= 1_000_000 ? Runs(warmUp: 1, measured: 5) : size >= 100_000 ? Runs(warmUp: 2, measured: 15) : Runs(warmUp: 2, measured: 21)
        let fixture = Fixture<OneRowChangeFixture>()
        Benchmark(
            "OneRowChange.\(formatCount(size)).\(side.rawValue)",
            configuration: .with(
                Change.allCases.map(\.metric) + [.mallocCountTotal], runs,
                setup: { fixture.set(try OneRowChangeFixture(size: size, side: side)) },
                teardown: {
                    try fixture.value.finish()
                    fixture.set(nil)
                })
        ) { benchmark in
            for (change, nanoseconds) in try fixture.value.driver.oneRound() {
                benchmark.record(change.metric, nanoseconds: nanoseconds)
            }
        }
    }
}

// MARK: - Many-to-many

func registerManyToMany(size: Int) {
    for side in [Side.strata, .refetchDiff] {
        let runs: Runs =
            side == .strata ? Runs(warmUp: 5, measured: 51)
            : size >= 1_000_000 ? Runs(warmUp: 1, measured: 5) : size >= 100_000 ? Runs(warmUp: 2, measured: 15) : Runs(warmUp: 2, measured: 21)
        let fixture = Fixture<ManyToManyBenchmark>()
        Benchmark(
            "ManyToMany.\(formatCount(size)).\(side.rawValue)",
            configuration: .with(
                ManyToManyBenchmark.Kind.allCases.map(\.metric) + [ManyToManyBenchmark.listed, .mallocCountTotal], runs,
                setup: { fixture.set(try ManyToManyBenchmark(size: size, side: side)) },
                teardown: {
                    try fixture.value.finish()
                    fixture.set(nil)
                })
        ) { benchmark in
            let fixture = fixture.value
            for (kind, nanoseconds) in try fixture.oneRound() { benchmark.record(kind.metric, nanoseconds: nanoseconds) }
            benchmark.measurement(ManyToManyBenchmark.listed, fixture.listed)
        }
    }
}

// MARK: - Initial fetch

/// `ResultsController.init` (sections, notes, grouping, first snapshot) against a plain GRDB
/// fetch of the same rows in the same order.
func registerInitialFetch(size: Int) {
    let runs = size >= 1_000_000 ? Runs(warmUp: 1, measured: 3) : Runs(warmUp: 2, measured: 9)
    // Held: the requested bytes allocated and not freed in the measured region (the controller,
    // or the array of notes, is released after it), what the results take in memory.
    let metrics: [BenchmarkMetric] = [.wallClock, .mallocCountTotal, .memoryLeakedBytes, .peakMemoryResident]
    let database = Fixture<NotesDatabase>()
    let setup: Benchmark.BenchmarkSetupHook = { database.set(try NotesDatabase(noteCount: size)) }
    let teardown: Benchmark.BenchmarkTeardownHook = {
        database.value.remove()
        database.set(nil)
    }
    let deliveries = DispatchQueue(label: "strata.benchmarks.fetch")
    Benchmark(
        "InitialFetch.\(formatCount(size)).Strata", configuration: .with(metrics, runs, setup: setup, teardown: teardown)
    ) { benchmark in
        benchmark.startMeasurement()
        let controller = try ResultsController(
            store: database.value.store, request: Note.Fetches.byNotebook, deliveryQueue: deliveries)
        benchmark.stopMeasurement()
        guard controller.snapshot.rowCounts.reduce(0, +) == size else { throw BenchmarkError.resultsDiffer("controller rows") }
        withExtendedLifetime(controller) {}
    }
    Benchmark(
        "InitialFetch.\(formatCount(size)).GRDB", configuration: .with(metrics, runs, setup: setup, teardown: teardown)
    ) { benchmark in
        benchmark.startMeasurement()
        let notes = try database.value.store.read { db in
            try Note.order(Column("pinned").desc, Column("title"), Column("id")).fetchAll(db)
        }
        benchmark.stopMeasurement()
        guard notes.count == size else { throw BenchmarkError.resultsDiffer("plain fetch found \(notes.count)") }
    }
}
