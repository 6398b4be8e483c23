import Benchmark
import Dispatch
import Foundation
import GRDB
import Strata

/// Commits that change many rows at once, and the controller's fallback path (a refetch or
/// a derivation of every section, then the identity difference), timed on a live
/// controller against the refetch + diff baseline in the same run.
///
/// - *k changed rows*: one transaction gives k random notes a new random title, so that
///   each moves inside its section; timed from the commit to the batch's delivery (or the
///   reload's: a batched controller's refetch is delivered as a reload), for an eager and a
///   batched controller, beside a fresh controller's open on the same store (the two sides of
///   the controller's choice between incremental work and a refetch: see `RefetchPolicy`).
/// - *Large commits*: one transaction that deletes 10% of the notes, inserts as many new
///   ones into random notebooks and gives 2% new titles (1%) or notebooks (1%); and one
///   that gives 30% of the notes new titles, above the controller's refetch threshold.
/// - *Options*: a post-fetch filter (about half the notes) set and removed, and a
///   comparator (titles in reverse) set and removed, timed from the property's setter to
///   the batch's delivery.
/// - *Resume*: `pause()`, the large commit above, then `resume()` until its reload is
///   delivered.
final class LargeCommitsBenchmark {
    let database: NotesDatabase
    let probe: LatencyProbe
    let deliveries = DispatchQueue(label: "strata.benchmarks.large")
    let freshDeliveries = DispatchQueue(label: "strata.benchmarks.large.fresh")
    let controller: ResultsController<Note, Notebook>?
    let forwarder: CommitForwarder
    let baseline: RefetchBaseline?
    /// Whether the controller loads in pages.
    let isBatched: Bool
    var random = SplitMix64(seed: 99)

    /// A store of `size` notes, and a live controller of `Note.Fetches.byNotebook` (`loading`:
    /// eager or batched, after reading its first page), or the refetch + diff baseline instead.
    init(size: Int, side: Side, loading: ResultsLoading = .eager) throws {
        database = try NotesDatabase(noteCount: size, seed: 43)
        probe = LatencyProbe(store: database.store)
        forwarder = CommitForwarder(probe: probe)
        isBatched = if case .batched = loading { true } else { false }
        switch side {
        case .strata:
            let controller = try ResultsController(
                store: database.store, request: Note.Fetches.byNotebook, loading: loading, deliveryQueue: deliveries)
            controller.coordinate(forwarder)
            controller.waitForDeliveries()
            if isBatched { _ = controller.snapshot[ItemPath(section: 0, item: 0)] }  // a list showing its first rows
            forwarder.armed = true
            self.controller = controller
            baseline = nil
        case .refetchDiff:
            let probe = probe
            baseline = try RefetchBaseline(store: database.store, deliveryQueue: deliveries) { probe.batchDidArrive($0) }
            controller = nil
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

    // MARK: - Commits

    enum Commit {
        /// k random notes get a new title.
        case retitle(Int)
        /// 10% deleted, 10% inserted, 1% retitled, 1% moved to another notebook.
        case shape(deleted: Double, inserted: Double, retitled: Double, rehomed: Double)

        static let issueShape = Commit.shape(deleted: 0.10, inserted: 0.10, retitled: 0.01, rehomed: 0.01)
    }

    /// Runs `commit` once on the store; returns how many notes it changed.
    @discardableResult
    func perform(_ commit: Commit) throws -> Int {
        let ids = try database.store.read { db in try Int64.fetchAll(db, sql: "SELECT id FROM Note") }
        var random = self.random
        defer { self.random = random }
        func pick(_ count: Int, from pool: [Int64], excluding: Set<Int64> = []) -> [Int64] {
            var chosen = Set<Int64>()
            let count = min(count, pool.count - excluding.count)
            while chosen.count < count {
                let id = pool[Int(random.next(upperBound: UInt64(pool.count)))]
                if !excluding.contains(id) { chosen.insert(id) }
            }
            return Array(chosen)
        }
        let count = ids.count
        let updatedAt = Date(timeIntervalSince1970: 1_780_000_000)
        switch commit {
        case .retitle(let k):
            let chosen = pick(k, from: ids)
            let titles = chosen.map { _ in NotesDatabase.title(&random) }
            try database.store.write { db in
                let update = try db.makeStatement(sql: "UPDATE Note SET title = ? WHERE id = ?")
                for (id, title) in zip(chosen, titles) { try update.execute(arguments: [title, id]) }
            }
            return k
        case .shape(let deleted, let inserted, let retitled, let rehomed):
            let deletes = pick(Int(Double(count) * deleted), from: ids)
            let gone = Set(deletes)
            let retitles = pick(Int(Double(count) * retitled), from: ids, excluding: gone)
            let rehomes = pick(Int(Double(count) * rehomed), from: ids, excluding: gone.union(retitles))
            let inserts = Int(Double(count) * inserted)
            let titles = (0..<(inserts + retitles.count)).map { _ in NotesDatabase.title(&random) }
            let notebooks = (0..<(inserts + rehomes.count)).map { _ in
                Int64(random.next(upperBound: UInt64(NotesDatabase.notebookCount))) + 1
            }
            try database.store.write { db in
                let delete = try db.makeStatement(sql: "DELETE FROM Note WHERE id = ?")
                for id in deletes { try delete.execute(arguments: [id]) }
                let insert = try db.makeStatement(sql: """
                    INSERT INTO Note (title, body, pinned, priority, updatedAt, notebookID) VALUES (?, '', 0, 'normal', ?, ?)
                    """)
                for i in 0..<inserts { try insert.execute(arguments: [titles[i], updatedAt, notebooks[i]]) }
                let retitle = try db.makeStatement(sql: "UPDATE Note SET title = ? WHERE id = ?")
                for (i, id) in retitles.enumerated() { try retitle.execute(arguments: [titles[inserts + i], id]) }
                let rehome = try db.makeStatement(sql: "UPDATE Note SET notebookID = ? WHERE id = ?")
                for (i, id) in rehomes.enumerated() { try rehome.execute(arguments: [notebooks[inserts + i], id]) }
            }
            return deletes.count + inserts + retitles.count + rehomes.count
        }
    }

    /// One commit, timed from the commit to its batch (or reload); the batch is checked.
    func timeCommit(_ commit: Commit) throws -> UInt64 {
        let changed = try perform(commit)
        let (nanoseconds, batch) = probe.waitForUpdate()
        if let batch {
            try check(batch, changed: changed, commit: commit)
        } else {
            // A reload: only a batched controller's refetch delivers one.
            guard controller != nil, isBatched else { throw BenchmarkError.unexpectedBatch("a reload from an eager controller") }
        }
        return nanoseconds
    }

    /// A fresh controller opened on the store as the last commit left it (its log, its
    /// pages), timed like `KCommit.Open`: the other side of the controller's choice in the
    /// same state. Only an eager controller's fixture times it.
    func timeFreshOpen() throws -> UInt64? {
        guard controller != nil, !isBatched else { return nil }
        let started = DispatchTime.now().uptimeNanoseconds
        let fresh = try ResultsController(
            store: database.store, request: Note.Fetches.byNotebook, loading: .eager, deliveryQueue: freshDeliveries)
        let nanoseconds = DispatchTime.now().uptimeNanoseconds - started
        guard fresh.snapshot == controller!.snapshot else { throw BenchmarkError.resultsDiffer("a fresh controller's results") }
        return nanoseconds
    }

    /// A batch of retitled rows reports each of them (as an update or a move) and nothing
    /// else but moves; one of the large shape has deletes and inserts too.
    private func check(_ batch: ChangeBatch, changed: Int, commit: Commit) throws {
        let sectionsUntouched = batch.sectionDeletes.isEmpty && batch.sectionInserts.isEmpty && batch.sectionMoves.isEmpty
        switch commit {
        case .retitle(let k):
            guard sectionsUntouched, batch.itemInserts.isEmpty, batch.itemDeletes.isEmpty,
                batch.itemMoves.count + batch.itemUpdates.count >= k
            else { throw BenchmarkError.unexpectedBatch("\(k) retitled rows: \(batch.itemMoves.count) moves") }
        case .shape:
            guard sectionsUntouched, !batch.itemInserts.isEmpty, !batch.itemDeletes.isEmpty else {
                throw BenchmarkError.unexpectedBatch("large commit: \(batch.itemInserts.count) inserts")
            }
        }
    }
}

/// Hands a controller's batches to the probe, and once armed (after the controller's first
/// delivery) its reloads too.
final class CommitForwarder: Coordinatable, @unchecked Sendable {
    typealias Item = Note
    typealias Section = Notebook
    let probe: LatencyProbe
    /// Set before the first commit; read on the delivery queue after.
    var armed = false
    init(probe: LatencyProbe) { self.probe = probe }
    func apply(_ batch: ChangeBatch, snapshot: ResultsSnapshot<Note, Notebook>) { probe.batchDidArrive(batch) }
    func reload(_ snapshot: ResultsSnapshot<Note, Notebook>) {
        if armed { probe.reloadDidArrive() }
    }
}

/// Commits of k changed rows, large commits, option toggles and `resume()`, at `size` notes.
func registerLargeCommits(size: Int) {
    let metrics: [BenchmarkMetric] = [latency("commit to batch"), .mallocCountTotal]
    /// An eager controller's commits of k rows also time a fresh open right after each
    /// commit, on the store in the state the commit left (see `timeFreshOpen()`).
    let freshOpen = latency("fresh open after the commit")
    /// `batched`: a third side, the commits on a batched controller.
    func register(
        _ name: String, _ commit: @escaping (Int) -> LargeCommitsBenchmark.Commit, strataRuns: Runs, baselineRuns: Runs,
        batched: Bool = false, timesFreshOpen: Bool = false
    ) {
        for (side, loading) in [(Side.strata, ResultsLoading.eager), (.refetchDiff, .eager)] + (batched ? [(.strata, BatchedLoadingBenchmark.loading)] : []) {
            let fixture = Fixture<LargeCommitsBenchmark>()
            let isBatched = if case .batched = loading { true } else { false }
            let timesFreshOpen = timesFreshOpen && side == .strata && !isBatched
            Benchmark(
                "\(name).\(isBatched ? "Batched" : side.rawValue)",
                configuration: .with(
                    timesFreshOpen ? metrics + [freshOpen] : metrics, side == .strata ? strataRuns : baselineRuns,
                    setup: { fixture.set(try LargeCommitsBenchmark(size: size, side: side, loading: loading)) },
                    teardown: {
                        try fixture.value.finish()
                        fixture.set(nil)
                    })
            ) { benchmark in
                let fixture = fixture.value
                let rows = fixture.controller?.snapshot.rowCounts.reduce(0, +) ?? fixture.baseline!.snapshot.rowCounts.reduce(0, +)
                benchmark.record(metrics[0], nanoseconds: try fixture.timeCommit(commit(rows)))
                if timesFreshOpen, let nanoseconds = try fixture.timeFreshOpen() {
                    benchmark.record(freshOpen, nanoseconds: nanoseconds)
                }
            }
        }
    }
    // k random notes retitled in one transaction (each moves inside its section), up to all
    // of them; eager and batched.
    for k in [10, 100, 1_000, 10_000, 25_000, 50_000, 100_000] {
        let strataRuns = k <= 1_000 ? Runs(warmUp: 3, measured: 15) : k <= 10_000 ? Runs(warmUp: 2, measured: 9) : Runs(warmUp: 1, measured: 7)
        register(
            "KCommit.\(formatCount(k))", { rows in .retitle(min(k, rows)) }, strataRuns: strataRuns,
            baselineRuns: Runs(warmUp: 1, measured: 7), batched: true, timesFreshOpen: k >= 10_000)
    }
    // The other side of the choice: a fresh controller opened on the same store (init, and for
    // a batched controller its first page read), in the same run as the commits.
    for batched in [false, true] {
        let fixture = Fixture<NotesDatabase>()
        let deliveries = DispatchQueue(label: "strata.benchmarks.open")
        Benchmark(
            "KCommit.Open.\(batched ? "Batched" : "Eager")",
            configuration: .with(
                [.wallClock, .mallocCountTotal], Runs(warmUp: 2, measured: 9),
                setup: { fixture.set(try NotesDatabase(noteCount: size, seed: 43)) },
                teardown: {
                    fixture.value.remove()
                    fixture.set(nil)
                })
        ) { benchmark in
            benchmark.startMeasurement()
            let controller = try ResultsController(
                store: fixture.value.store, request: Note.Fetches.byNotebook,
                loading: batched ? BatchedLoadingBenchmark.loading : .eager, deliveryQueue: deliveries)
            if batched { blackHole(controller.snapshot[ItemPath(section: 0, item: 0)]) }
            benchmark.stopMeasurement()
            guard controller.snapshot.rowCounts.reduce(0, +) == size else { throw BenchmarkError.resultsDiffer("controller rows") }
            withExtendedLifetime(controller) {}
        }
    }
    // 10% deleted, 10% inserted, 1% retitled, 1% to another notebook; 30% retitled.
    register("Fallback.LargeCommit", { _ in .issueShape }, strataRuns: Runs(warmUp: 1, measured: 7), baselineRuns: Runs(warmUp: 1, measured: 7))
    register("Fallback.Retitle30", { rows in .retitle(rows * 3 / 10) }, strataRuns: Runs(warmUp: 1, measured: 7), baselineRuns: Runs(warmUp: 1, measured: 7))

    // Options, set and removed, each timed from the setter to its batch.
    func registerOption(_ name: String, set: @escaping @Sendable (ResultsController<Note, Notebook>) -> Void, unset: @escaping @Sendable (ResultsController<Note, Notebook>) -> Void) {
        let fixture = Fixture<LargeCommitsBenchmark>()
        let on = latency("set"), off = latency("removed"), changed = count("rows changed")
        Benchmark(
            "Fallback.\(name).Strata",
            configuration: .with(
                [on, off, changed, .mallocCountTotal], Runs(warmUp: 1, measured: 7),
                setup: { fixture.set(try LargeCommitsBenchmark(size: size, side: .strata)) },
                teardown: {
                    try fixture.value.finish()
                    fixture.set(nil)
                })
        ) { benchmark in
            let fixture = fixture.value
            let controller = fixture.controller!
            func toggle(_ body: (ResultsController<Note, Notebook>) -> Void) -> (UInt64, ChangeBatch) {
                let start = now()
                body(controller)
                let batch = fixture.probe.waitForBatch().batch
                return (now() - start, batch)
            }
            let set = toggle(set)
            let removed = toggle(unset)
            let rows = max(set.1.itemDeletes.count, set.1.itemMoves.count)
            guard rows > 0, removed.1.itemInserts.count == set.1.itemDeletes.count else {
                throw BenchmarkError.unexpectedBatch("\(name): \(set.1.itemDeletes.count) filtered, \(set.1.itemMoves.count) moved")
            }
            benchmark.record(on, nanoseconds: set.0)
            benchmark.record(off, nanoseconds: removed.0)
            benchmark.measurement(changed, rows)
        }
    }
    let filter: @Sendable (Note) -> Bool = { note in note.title.utf8.last.map { $0 & 1 == 0 } ?? true }
    let comparator: @Sendable (Note, Note) -> Bool = { $0.title > $1.title }
    registerOption("Filter", set: { $0.filter = filter }, unset: { $0.filter = nil })
    registerOption("Comparator", set: { $0.comparator = comparator }, unset: { $0.comparator = nil })

    // `pause()`, the large commit, then `resume()` until its reload is delivered; beside a
    // plain GRDB refetch of the same rows (no difference), after the same commit.
    let resume = latency("to reload")
    let fixture = Fixture<LargeCommitsBenchmark>()
    Benchmark(
        "Fallback.Resume.Strata",
        configuration: .with(
            [resume, .mallocCountTotal], Runs(warmUp: 1, measured: 7),
            setup: { fixture.set(try LargeCommitsBenchmark(size: size, side: .strata)) },
            teardown: {
                try fixture.value.finish()
                fixture.set(nil)
            })
    ) { benchmark in
        let fixture = fixture.value
        let controller = fixture.controller!
        controller.pause()
        try fixture.perform(.issueShape)
        benchmark.startMeasurement()
        let start = now()
        try controller.resume()
        controller.waitForDeliveries()
        let elapsed = now() - start
        benchmark.stopMeasurement()
        benchmark.record(resume, nanoseconds: elapsed)
    }
    let plain = Fixture<LargeCommitsBenchmark>()
    Benchmark(
        "Fallback.Resume.GRDB",
        configuration: .with(
            [resume, .mallocCountTotal], Runs(warmUp: 1, measured: 7),
            setup: { plain.set(try LargeCommitsBenchmark(size: size, side: .refetchDiff)) },
            teardown: {
                plain.value.baseline?.cancel()
                plain.value.database.remove()
                plain.set(nil)
            })
    ) { benchmark in
        let fixture = plain.value
        fixture.baseline?.cancel()
        try fixture.perform(.issueShape)
        benchmark.startMeasurement()
        let start = now()
        let fetched = try fixture.database.store.read { db in try RefetchBaseline.fetch(db) }
        let elapsed = now() - start
        benchmark.stopMeasurement()
        blackHole(fetched)
        benchmark.record(resume, nanoseconds: elapsed)
    }
}
