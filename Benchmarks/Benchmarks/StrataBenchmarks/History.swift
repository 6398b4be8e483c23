import Benchmark
import Dispatch
import Foundation
import GRDB
import Strata

/// The change history: write throughput with and without it; another process's commit →
/// batch latency in this process's controller, with the default check interval and a lower
/// one; and what applying another process's one-row change costs at 100k notes, beside a local
/// one. The other process is `StrataHistoryWriter`, built next to this executable.
func registerHistory(size: Int) {
    // Write throughput: the same inserts into a new store, history on and off.
    let workloads: [(name: String, transactions: Int, rows: Int)] = [
        ("OneRowTx300", 300, 1), ("OneRowTx2000", 2_000, 1), ("OneRowTx10000", 10_000, 1),
        ("HundredRowTx100", 100, 100), ("TenThousandRowTx1", 1, 10_000),
    ]
    for workload in workloads {
        for recordsHistory in [true, false] {
            Benchmark(
                "HistoryWrite.\(workload.name).\(recordsHistory ? "On" : "Off")",
                configuration: .with([.wallClock, .mallocCountTotal], Runs(warmUp: 1, measured: 5))
            ) { benchmark in
                let database = try NotesDatabase(
                    noteCount: 0, options: Store.Options(recordsHistory: recordsHistory, externalCommitInterval: nil))
                defer { database.remove() }
                benchmark.startMeasurement()
                try HistoryBenchmark.insert(into: database, transactions: workload.transactions, rows: workload.rows)
                benchmark.stopMeasurement()
            }
        }
    }

    // Another process retitles one note per commit; this process's controller, on its own store
    // checking every `interval`: commit returned in the writer → batch delivered here.
    let unmatched = count("commits not found in a batch"), batches = count("batches")
    for (run, interval) in [Duration.milliseconds(50), .milliseconds(5)].enumerated() {
        let database = Fixture<NotesDatabase>()
        Benchmark(
            "CrossProcess.\(formatCount(size)).Interval\(formatInterval(interval).replacingOccurrences(of: " ", with: ""))",
            configuration: .with(
                [latency("commit to batch"), unmatched, batches], Runs(warmUp: 0, measured: 1),
                setup: {
                    let store = try NotesDatabase(noteCount: size, options: Store.Options(externalCommitInterval: nil))
                    // One store on the file in this process at a time (see Benchmarks/README.md).
                    try store.store.close()
                    database.set(store)
                },
                teardown: {
                    database.value.remove()
                    database.set(nil)
                })
        ) { benchmark in
            let figures = try HistoryBenchmark.crossProcessLatency(database.value, interval: interval, run: run, commits: 200)
            for nanoseconds in figures.latencies { benchmark.record(latency("commit to batch"), nanoseconds: nanoseconds) }
            benchmark.measurement(unmatched, figures.unmatched)
            benchmark.measurement(batches, figures.deliveries)
        }
    }

    // A one-row change (a retitle, a move) made here, commit → batch; and made by another
    // process, with this store asked to check right after the other's commit
    // (`checkForExternalCommits()` → batch, without the interval's wait), and the number of
    // full fetches the controller made for them (a statement trace).
    let local = Fixture<ExternalChangeFixture>()
    let change = latency("retitle")
    Benchmark(
        "ExternalChange.\(formatCount(size)).Local",
        configuration: .with(
            [change, .mallocCountTotal], Runs(warmUp: 5, measured: 51),
            setup: { local.set(try ExternalChangeFixture(size: size)) },
            teardown: {
                local.value.finish()
                local.set(nil)
            })
    ) { benchmark in
        benchmark.record(change, nanoseconds: try local.value.localRetitle())
    }
    let external = Fixture<ExternalChangeFixture>()
    let fullFetches = count("full fetches")
    Benchmark(
        "ExternalChange.\(formatCount(size)).OtherProcess",
        configuration: .with(
            [change, fullFetches], Runs(warmUp: 0, measured: 1),
            setup: { external.set(try ExternalChangeFixture(size: size)) },
            teardown: {
                external.value.finish()
                external.set(nil)
            })
    ) { benchmark in
        let (latencies, fetches) = try external.value.externalRetitles(warmUp: 5, repetitions: 51)
        for nanoseconds in latencies { benchmark.record(change, nanoseconds: nanoseconds) }
        benchmark.measurement(fullFetches, fetches)
    }
}

/// A store of its own with a live controller, never reopened in this process (see
/// Benchmarks/README.md).
final class ExternalChangeFixture {
    let database: NotesDatabase
    let probe: LatencyProbe
    let controller: ResultsController<Note, Notebook>
    let forwarder: BatchForwarder
    var random = SplitMix64(seed: 11)

    init(size: Int) throws {
        database = try NotesDatabase(noteCount: size, seed: 43, options: Store.Options(externalCommitInterval: nil))
        probe = LatencyProbe(store: database.store)
        controller = try ResultsController(
            store: database.store, request: Note.Fetches.byNotebook, deliveryQueue: DispatchQueue(label: "strata.benchmarks.cost"))
        forwarder = BatchForwarder(probe: probe)  // held weakly by the controller
        controller.coordinate(forwarder)
        controller.waitForDeliveries()
    }

    /// A random note retitled here: commit → batch.
    func localRetitle() throws -> UInt64 {
        let id = Int64(random.next(upperBound: UInt64(database.noteCount))) + 1
        let title = NotesDatabase.title(&random)
        try database.store.write { db in try db.execute(sql: "UPDATE Note SET title = ? WHERE id = ?", arguments: [title, id]) }
        return probe.waitForBatch().nanoseconds
    }

    /// Notes retitled by another process, each applied here right after its commit: the
    /// measured latencies, and the full fetches the controller made.
    func externalRetitles(warmUp: Int, repetitions: Int) throws -> (latencies: [UInt64], fullFetches: Int) {
        let store = database.store
        let trace = store.traceStatements()
        var latencies: [UInt64] = []
        let child = try ChildWriter(path: database.path, run: 9, count: warmUp + repetitions, noteCount: database.noteCount)
        var round = 0
        while child.nextLine() != nil {
            let start = now()
            try store.checkForExternalCommits()
            // Nothing new when the previous check already found this commit (the child wrote
            // it while that one ran): not timed.
            guard probe.waitForAnyBatch(seconds: 2) else { continue }
            let elapsed = now() - start
            if round >= warmUp { latencies.append(elapsed) }
            round += 1
        }
        child.wait()
        let fullFetches = trace.statements.filter {
            $0.hasPrefix("SELECT t0.*") && $0.contains("FROM \"Note\" AS t0") && !$0.contains("t0.\"id\" IN (")
        }.count
        trace.stop()
        return (latencies, fullFetches)
    }

    func finish() {
        withExtendedLifetime(controller) {}
        withExtendedLifetime(forwarder) {}
        database.remove()
    }
}

enum HistoryBenchmark {
    struct Latency {
        var latencies: [UInt64]
        var deliveries: Int
        /// Commits whose note was not found in a delivered batch (not timed).
        var unmatched: Int
    }

    // MARK: - Write throughput

    static func insert(into database: NotesDatabase, transactions: Int, rows: Int) throws {
        var random = SplitMix64(seed: 7)
        for _ in 0..<transactions {
            var titles: [String] = []
            for _ in 0..<rows { titles.append(NotesDatabase.title(&random)) }
            let notebook = Int64(random.next(upperBound: UInt64(NotesDatabase.notebookCount))) + 1
            try database.store.write { db in
                let statement = try db.cachedStatement(
                    sql: "INSERT INTO Note (title, updatedAt, notebookID) VALUES (?, ?, ?)")
                for title in titles {
                    try statement.execute(arguments: [title, Date(timeIntervalSince1970: 1_780_000_000), notebook])
                }
            }
        }
    }

    // MARK: - Another process's commits

    /// Another process (`StrataHistoryWriter`) retitles one note per commit, a
    /// few milliseconds apart, and prints when each commit returned; a controller in this
    /// process, on its own store whose timer checks every `interval`, records when the
    /// batch carrying each retitled note arrives.
    static func crossProcessLatency(_ database: NotesDatabase, interval: Duration, run: Int, commits: Int) throws -> Latency {
        let store = try Store(schema: NotesModel.schema, path: database.path, options: Store.Options(externalCommitInterval: interval))
        defer { try? store.close() }
        let arrivals = ArrivalRecorder(prefix: "Bench \(run) ")
        let controller = try ResultsController(
            store: store, request: Note.Fetches.byNotebook, deliveryQueue: DispatchQueue(label: "strata.benchmarks.history"))
        controller.coordinate(arrivals)
        controller.waitForDeliveries()
        let child = try ChildWriter(path: database.path, run: run, count: commits, noteCount: database.noteCount)
        var committed: [Int: UInt64] = [:]
        while let line = child.nextLine() {
            let parts = line.split(separator: " ")
            guard parts.count == 2, let index = Int(parts[0]), let time = UInt64(parts[1]) else { continue }
            committed[index] = time
        }
        child.wait()
        // The last commits' batches.
        let deadline = now() + 5_000_000_000
        while arrivals.count < committed.count && now() < deadline { usleep(1_000) }
        controller.waitForDeliveries()
        var latencies: [UInt64] = []
        let arrived = arrivals.times
        var unmatched = 0
        for (index, time) in committed {
            guard let arrival = arrived[index] else {
                unmatched += 1
                continue
            }
            latencies.append(arrival > time ? arrival - time : 0)
        }
        if unmatched > 0 { log("   \(unmatched) commits were not found in a batch") }
        // Whatever was matched, the controller must end equal to a fresh fetch.
        let fresh = try ResultsController(store: store, request: Note.Fetches.byNotebook, deliveryQueue: DispatchQueue(label: "strata.benchmarks.fresh"))
        guard fresh.snapshot == controller.snapshot else { throw BenchmarkError.resultsDiffer("after another process's commits") }
        withExtendedLifetime(controller) {}
        return Latency(latencies: latencies, deliveries: arrivals.batches, unmatched: unmatched)
    }
}

/// Records when the batch carrying each retitled note ("PREFIX I …") arrived.
final class ArrivalRecorder: Coordinatable, @unchecked Sendable {
    typealias Item = Note
    typealias Section = Notebook
    private let prefix: String
    private let lock = NSLock()
    private var arrived: [Int: UInt64] = [:]
    private var batchCount = 0

    init(prefix: String) { self.prefix = prefix }

    var times: [Int: UInt64] { lock.withLock { arrived } }
    var count: Int { lock.withLock { arrived.count } }
    var batches: Int { lock.withLock { batchCount } }

    func apply(_ batch: ChangeBatch, snapshot: ResultsSnapshot<Note, Notebook>) {
        let time = now()
        var paths = batch.itemMoves.map(\.to) + batch.itemInserts + batch.movedAndUpdatedItems
        paths += batch.itemUpdates.filter { $0.section < snapshot.sections.count && $0.item < snapshot.sections[$0.section].rows.count }
        var indexes: [Int] = []
        for path in paths {
            guard case .item(let note) = snapshot.sections[path.section].rows[path.item], note.title.hasPrefix(prefix) else { continue }
            if let index = Int(note.title.dropFirst(prefix.count).prefix { $0 != " " }) { indexes.append(index) }
        }
        lock.withLock {
            batchCount += 1
            for index in indexes where arrived[index] == nil { arrived[index] = time }
        }
    }

    func reload(_ snapshot: ResultsSnapshot<Note, Notebook>) {}
}

/// `StrataHistoryWriter` (built next to this executable), read line by line.
final class ChildWriter {
    private let process = Process()
    private let pipe = Pipe()
    private var buffer = Data()

    init(path: String, run: Int, count: Int, noteCount: Int) throws {
        let here = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        let writer = here.deletingLastPathComponent().appendingPathComponent("StrataHistoryWriter")
        guard FileManager.default.isExecutableFile(atPath: writer.path) else {
            throw BenchmarkError.missingWriter("build it first: swift build -c release --product StrataHistoryWriter")
        }
        process.executableURL = writer
        process.arguments = [path, "\(run)", "\(count)", "\(noteCount)"]
        process.standardOutput = pipe
        try process.run()
    }

    /// The next line, or nil at the end of the output.
    func nextLine() -> String? {
        while true {
            if let end = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[buffer.startIndex..<end], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...end)
                return line
            }
            let chunk = pipe.fileHandleForReading.availableData
            if chunk.isEmpty { return nil }
            buffer.append(chunk)
        }
    }

    func wait() { process.waitUntilExit() }
}

/// An interval as "50 ms".
func formatInterval(_ interval: Duration) -> String {
    let components = interval.components
    return "\(components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000) ms"
}
