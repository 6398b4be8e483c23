import Dispatch
import Foundation
import GRDB
import Strata

/// The change history: write throughput with and without it, in the same run; another
/// process's commit → batch latency in this process's controller, with the default check
/// interval and a lower one; and what applying another process's one-row change costs at
/// 100k notes, beside a local one.
enum HistoryBenchmark {
    struct Throughput {
        var workload: String
        var rows: Int
        var on: Samples
        var off: Samples
    }

    struct Latency {
        var interval: Duration
        var samples: Samples
        var deliveries: Int
        /// Commits whose note was not found in a delivered batch (not timed).
        var unmatched: Int
    }

    struct Cost {
        var size: Int
        var local: Samples
        var external: Samples
        var externalFullFetches: Int
    }

    struct Figures {
        var throughput: [Throughput] = []
        var latency: [Latency] = []
        var cost: Cost?
    }

    static let childFlag = "--history-writer"

    static func run(size: Int, quick: Bool) throws -> Figures {
        var figures = Figures()
        log("== change history")
        figures.throughput = try throughput(rounds: quick ? 3 : 5)
        for figure in figures.throughput {
            log("   \(figure.workload): on \(formatMilliseconds(figure.on.medianMilliseconds)), off \(formatMilliseconds(figure.off.medianMilliseconds))")
        }
        let database = try NotesDatabase(noteCount: size, options: Store.Options(externalCommitInterval: nil))
        defer { database.remove() }
        // One store on the file in this process at a time (see Benchmarks/README.md).
        try database.store.close()
        for (run, interval) in [Duration.milliseconds(50), .milliseconds(5)].enumerated() {
            let latency = try crossProcessLatency(database, interval: interval, run: run, commits: quick ? 100 : 200)
            log("   another process → batch, checks every \(formatInterval(interval)): p50 \(formatMilliseconds(latency.samples.medianMilliseconds)), p99 \(formatMilliseconds(latency.samples.percentile(0.99)))")
            figures.latency.append(latency)
        }
        // A store of its own, never reopened in this process (see Benchmarks/README.md).
        let costDatabase = try NotesDatabase(noteCount: size, seed: 43, options: Store.Options(externalCommitInterval: nil))
        defer { costDatabase.remove() }
        figures.cost = try externalCost(costDatabase, repetitions: quick ? 31 : 51)
        if let cost = figures.cost {
            log("   one-row change at \(formatCount(size)): local \(formatMilliseconds(cost.local.medianMilliseconds)), another process's \(formatMilliseconds(cost.external.medianMilliseconds)), full fetches \(cost.externalFullFetches)")
        }
        return figures
    }

    // MARK: - Write throughput

    /// The same writes into two stores, one recording history and one not, alternately.
    static func throughput(rounds: Int) throws -> [Throughput] {
        let workloads: [(name: String, transactions: Int, rows: Int)] = [
            ("1 row per transaction", 300, 1), ("1 row per transaction, 2,000 in a row", 2_000, 1),
            ("1 row per transaction, 10,000 in a row", 10_000, 1),
            ("100 rows per transaction", 100, 100), ("10,000 rows in one transaction", 1, 10_000),
        ]
        var result: [Throughput] = []
        for workload in workloads {
            var on = Samples(), off = Samples()
            for round in 0..<(rounds + 1) {
                for recordsHistory in (round % 2 == 0 ? [true, false] : [false, true]) {
                    let database = try NotesDatabase(
                        noteCount: 0, options: Store.Options(recordsHistory: recordsHistory, externalCommitInterval: nil))
                    defer { database.remove() }
                    let elapsed = try timed { try insert(into: database, transactions: workload.transactions, rows: workload.rows) }
                    if round > 0 {   // the first round warms up
                        if recordsHistory { on.nanoseconds.append(elapsed) } else { off.nanoseconds.append(elapsed) }
                    }
                }
            }
            result.append(Throughput(workload: workload.name, rows: workload.transactions * workload.rows, on: on, off: off))
        }
        return result
    }

    private static func insert(into database: NotesDatabase, transactions: Int, rows: Int) throws {
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

    /// A child process (this executable with ``childFlag``) retitles one note per commit, a
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
        let child = try ChildWriter(path: database.path, mode: "retitle", run: run, count: commits, noteCount: database.noteCount)
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
        var samples = Samples()
        let arrived = arrivals.times
        var unmatched = 0
        for (index, time) in committed {
            guard let arrival = arrived[index] else {
                unmatched += 1
                continue
            }
            samples.nanoseconds.append(arrival > time ? arrival - time : 0)
        }
        if unmatched > 0 { log("   \(unmatched) commits were not found in a batch") }
        // Whatever was matched, the controller must end equal to a fresh fetch.
        let fresh = try ResultsController(store: store, request: Note.Fetches.byNotebook, deliveryQueue: DispatchQueue(label: "strata.benchmarks.fresh"))
        guard fresh.snapshot == controller.snapshot else { throw BenchmarkError.resultsDiffer("after another process's commits") }
        withExtendedLifetime(controller) {}
        return Latency(interval: interval, samples: samples, deliveries: arrivals.batches, unmatched: unmatched)
    }

    /// One-row changes at the database's size: made here (commit → batch), and made by another
    /// process (this store asked to check right after the child's commit → batch), with the
    /// number of full fetches the controller made for the latter (a statement trace).
    static func externalCost(_ database: NotesDatabase, repetitions: Int) throws -> Cost {
        let store = database.store
        let probe = LatencyProbe(store: store)
        let controller = try ResultsController(
            store: store, request: Note.Fetches.byNotebook, deliveryQueue: DispatchQueue(label: "strata.benchmarks.cost"))
        let forwarder = BatchForwarder(probe: probe)   // held weakly by the controller
        controller.coordinate(forwarder)
        controller.waitForDeliveries()
        let warmUp = 5

        var local = Samples()
        var random = SplitMix64(seed: 11)
        for round in 0..<(warmUp + repetitions) {
            let id = Int64(random.next(upperBound: UInt64(database.noteCount))) + 1
            let title = NotesDatabase.title(&random)
            try store.write { db in try db.execute(sql: "UPDATE Note SET title = ? WHERE id = ?", arguments: [title, id]) }
            let (nanoseconds, _) = probe.waitForBatch()
            if round >= warmUp { local.nanoseconds.append(nanoseconds) }
        }

        let trace = store.traceStatements()
        var external = Samples()
        let child = try ChildWriter(
            path: database.path, mode: "retitle", run: 9, count: warmUp + repetitions, noteCount: database.noteCount)
        var round = 0
        while child.nextLine() != nil {
            let start = now()
            try store.checkForExternalCommits()
            // Nothing new when the previous check already found this commit (the child wrote
            // it while that one ran): not timed.
            guard probe.waitForAnyBatch(seconds: 2) else { continue }
            let elapsed = now() - start
            if round >= warmUp { external.nanoseconds.append(elapsed) }
            round += 1
        }
        child.wait()
        let fullFetches = trace.statements.filter {
            $0.hasPrefix("SELECT t0.*") && $0.contains("FROM \"Note\" AS t0") && !$0.contains("t0.\"id\" IN (")
        }.count
        trace.stop()
        withExtendedLifetime(controller) {}
        withExtendedLifetime(forwarder) {}
        return Cost(size: database.noteCount, local: local, external: external, externalFullFetches: fullFetches)
    }

    // MARK: - The child

    /// The child's loop: `--history-writer PATH MODE RUN COUNT NOTES`. Retitles a random note
    /// per commit ("Bench RUN I …"), 5 to 25 ms apart, and prints `I <monotonic ns>` once each
    /// commit returned.
    static func child(arguments: [String]) -> Never {
        guard arguments.count == 5, let run = Int(arguments[2]), let count = Int(arguments[3]),
              let noteCount = UInt64(arguments[4])
        else { usage() }
        do {
            let store = try Store(
                schema: NotesModel.schema, path: arguments[0], options: Store.Options(externalCommitInterval: nil))
            var random = SplitMix64(seed: UInt64(100 + run))
            // Let the parent's controller settle.
            usleep(50_000)
            // Distinct notes, so that no commit's title is overwritten before its batch.
            let start = random.next(upperBound: noteCount)
            for index in 0..<count {
                let id = Int64((start + UInt64(index) * 7_919) % noteCount) + 1
                let title = "Bench \(run) \(index) " + NotesDatabase.title(&random)
                try store.write { db in try db.execute(sql: "UPDATE Note SET title = ? WHERE id = ?", arguments: [title, id]) }
                let time = now()
                FileHandle.standardOutput.write(Data("\(index) \(time)\n".utf8))
                usleep(UInt32(5_000 + random.next(upperBound: UInt64(20_000))))
            }
            try store.close()
            exit(0)
        } catch {
            log("history writer: \(error)")
            exit(1)
        }
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

/// This executable, run as ``HistoryBenchmark/child(arguments:)``, read line by line.
final class ChildWriter {
    private let process = Process()
    private let pipe = Pipe()
    private var buffer = Data()

    init(path: String, mode: String, run: Int, count: Int, noteCount: Int) throws {
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = [HistoryBenchmark.childFlag, path, mode, "\(run)", "\(count)", "\(noteCount)"]
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
