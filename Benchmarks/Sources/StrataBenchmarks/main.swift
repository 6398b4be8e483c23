// Strata's benchmarks: the incremental results controller beside a refetch-everything
// baseline, and the controller's initial fetch beside a plain GRDB fetch, in one run.
//
//     swift run -c release StrataBenchmarks            # 10k, 100k and 1M notes
//     swift run -c release StrataBenchmarks --quick    # without 1M
//     swift run -c release StrataBenchmarks --sizes 10000,100000
//     swift run -c release StrataBenchmarks --diff-only   # the identity difference alone
//     swift run -c release StrataBenchmarks --k-commits   # commits of k changed rows at 100k
//     swift run -c release StrataBenchmarks --fallback    # large commits, options, resume at 100k
//     swift run -c release StrataBenchmarks --history-only   # the change history alone
import Dispatch
import Foundation
import GRDB
import Strata

// MARK: - Configuration

struct Plan {
    var sizes = [10_000, 100_000, 1_000_000]
    /// The size whose controller's peak resident size is reported.
    var memorySize = 100_000
    var incrementalOnly = false
    var fetchOnly = false
    /// Only batched loading (`--batched`), at the sizes given.
    var batchedOnly = false
    var batchedOpenOnly = false
    /// Large-list scenarios run on their own when any of these is given, all of them otherwise.
    var diffOnly = false
    var kCommitsOnly = false
    var fallbackOnly = false
    /// The standard library's difference takes seconds at 100k: it can be left out.
    var withStdlib = true
    /// The size of the large-list scenarios.
    var largeSize = 100_000
    var kValues = [10, 100, 1_000, 10_000, 25_000]
    /// Measured runs of Strata's identity difference (a profiler wants fewer).
    var diffRuns = 21

    /// Whether only large-list scenarios run.
    var largeListsOnly: Bool { diffOnly || kCommitsOnly || fallbackOnly }
    /// Only the ordered-list benchmark (`--ordered-only`); `--no-ordered` leaves it out.
    var orderedOnly = false
    /// The ordered list under a batched controller (`--ordered-batched`).
    var orderedBatched = false
    var ordered = true
    /// The ordered list's size and number of moves.
    var orderedSize = 100_000
    var orderedMoves = 10_000
    /// Only the change history's figures (throughput with and without it, other processes).
    var historyOnly = false
    var historyThroughputOnly = false
    var quick = false

    init(arguments: [String]) {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--quick":
                sizes.removeAll { $0 >= 1_000_000 }
                quick = true
            case "--history-only":
                historyOnly = true
            case "--history-throughput-only":
                // For profiling: the write throughput with history on and off, nothing else.
                historyThroughputOnly = true
            case "--sizes":
                guard let list = iterator.next() else { usage() }
                let parsed = list.split(separator: ",").compactMap { Int($0) }
                guard !parsed.isEmpty, parsed.allSatisfy({ $0 > 0 }) else { usage() }
                sizes = parsed
            case "--incremental-only":
                // For profiling: many rounds of the incremental controller, nothing else.
                incrementalOnly = true
            case "--batched":
                batchedOnly = true
            case "--batched-open-only":
                // For profiling: batched controllers opened again and again, nothing else.
                batchedOpenOnly = true
            case "--fetch-only":
                // For profiling: the initial fetch beside plain GRDB, nothing else.
                fetchOnly = true
            case "--diff-only":
                diffOnly = true
            case "--k-commits":
                kCommitsOnly = true
            case "--fallback":
                fallbackOnly = true
            case "--no-stdlib":
                withStdlib = false
            case "--k":
                guard let list = iterator.next() else { usage() }
                let parsed = list.split(separator: ",").compactMap { Int($0) }
                guard !parsed.isEmpty, parsed.allSatisfy({ $0 > 0 }) else { usage() }
                kValues = parsed
            case "--diff-runs":
                guard let value = iterator.next().flatMap({ Int($0) }), value > 0 else { usage() }
                diffRuns = value
            case "--large-size":
                guard let value = iterator.next().flatMap({ Int($0) }), value > 0 else { usage() }
                largeSize = value
            case "--ordered-only":
                orderedOnly = true
            case "--ordered-batched":
                orderedBatched = true
            case "--no-ordered":
                ordered = false
            case "--ordered-size":
                guard let value = iterator.next().flatMap({ Int($0) }), value > 1 else { usage() }
                orderedSize = value
            case "--ordered-moves":
                guard let value = iterator.next().flatMap({ Int($0) }), value > 0 else { usage() }
                orderedMoves = value
            case "-h", "--help":
                usage(exitCode: 0)
            default:
                usage()
            }
        }
    }

    /// Measured repetitions (after warm-up) of the incremental controller, per change kind.
    func incrementalRepetitions(_ size: Int) -> (warmUp: Int, repetitions: Int) { incrementalOnly ? (5, 1000) : (5, 51) }
    /// Measured repetitions of the refetch baseline: fewer where each takes seconds.
    func baselineRepetitions(_ size: Int) -> (warmUp: Int, repetitions: Int) {
        size >= 1_000_000 ? (1, 5) : size >= 100_000 ? (2, 15) : (2, 21)
    }
    /// Measured repetitions of the initial fetch.
    func fetchRepetitions(_ size: Int) -> (warmUp: Int, repetitions: Int) {
        fetchOnly ? (2, 30) : size >= 1_000_000 ? (1, 3) : (2, 9)
    }
}

func usage(exitCode: Int32 = 2) -> Never {
    let text = """
        usage: StrataBenchmarks [--quick] [--sizes N,N,...] [--incremental-only | --fetch-only | --history-only | --ordered-only | --no-ordered]
               StrataBenchmarks [--ordered-size N] [--ordered-moves N] [--ordered-batched]
               StrataBenchmarks [--diff-only] [--k-commits [--k N,N,...]] [--fallback] [--no-stdlib] [--diff-runs N] [--large-size N]
               StrataBenchmarks --batched [--sizes N,N,...]

        """
    FileHandle.standardError.write(Data(text.utf8))
    exit(exitCode)
}

func log(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

// MARK: - Results

struct ChangeFigures {
    var size: Int
    var change: Change
    var ours: Samples
    var baseline: Samples
}

struct FetchFigures {
    var size: Int
    var ours: Samples
    var plain: Samples
}

struct MemoryFigures {
    var size: Int
    var residentBefore: Int?
    var peakAfterInit: Int?
    var residentAfterInit: Int?
    var peakWasReset: Bool
}

// MARK: - One size

func benchmark(size: Int, plan: Plan) throws -> (
    changes: [ChangeFigures], fetch: FetchFigures, memory: MemoryFigures?, links: [ManyToManyBenchmark.Figures]
) {
    log("== \(formatCount(size)) notes in \(NotesDatabase.notebookCount) notebooks")
    var database: NotesDatabase?
    let setup = try timed { database = try NotesDatabase(noteCount: size) }
    guard let database else { fatalError("no database") }
    defer { database.remove() }
    log("   populated in \(formatMilliseconds(Double(setup) / 1e6))")
    let store = database.store
    let deliveries = DispatchQueue(label: "strata.benchmarks.deliveries")
    let probe = LatencyProbe(store: store)  // first commit handler: marks the commit time

    // The live controller, and the memory it takes.
    let peakWasReset = ProcessMemory.resetPeak()
    let residentBefore = ProcessMemory.resident
    let controller = try ResultsController(store: store, request: Note.Fetches.byNotebook, deliveryQueue: deliveries)
    let memory = MemoryFigures(
        size: size, residentBefore: residentBefore, peakAfterInit: ProcessMemory.peakResident,
        residentAfterInit: ProcessMemory.resident, peakWasReset: peakWasReset)
    let forwarder = BatchForwarder(probe: probe)
    controller.coordinate(forwarder)
    controller.waitForDeliveries()
    let initial = controller.snapshot
    guard initial.numberOfSections == NotesDatabase.notebookCount, initial.rowCounts.reduce(0, +) == size else {
        throw BenchmarkError.resultsDiffer("initial snapshot has \(initial.rowCounts.reduce(0, +)) rows")
    }

    if plan.fetchOnly {
        try measureInitialFetch(size: size, store: store, deliveries: deliveries, plan: plan)
        exit(0)
    }

    // 1. The incremental controller.
    let driver = ChangeDriver(database: database, probe: probe)
    let (warmUp, repetitions) = plan.incrementalRepetitions(size)
    let ours = try driver.run(warmUp: warmUp, repetitions: repetitions)
    log("   incremental: \(Change.allCases.map { "\($0) \(formatMilliseconds(ours[$0]!.medianMilliseconds))" }.joined(separator: ", "))")
    if plan.incrementalOnly { exit(0) }

    // 2. The baseline, with the controller paused (so that only one of them works per commit).
    controller.pause()
    let baseline = try RefetchBaseline(store: store, deliveryQueue: deliveries) { batch in probe.batchDidArrive(batch) }
    let (baseWarmUp, baseRepetitions) = plan.baselineRepetitions(size)
    let base = try driver.run(warmUp: baseWarmUp, repetitions: baseRepetitions)
    baseline.cancel()
    deliveries.sync {}
    log("   baseline:    \(Change.allCases.map { "\($0) \(formatMilliseconds(base[$0]!.medianMilliseconds))" }.joined(separator: ", "))")

    // Both must compute the same results.
    try controller.resume()
    controller.waitForDeliveries()
    guard controller.snapshot == baseline.snapshot else {
        throw BenchmarkError.resultsDiffer("snapshots differ after \(formatCount(size)) rounds")
    }
    controller.pause()

    // 3. Initial fetch.
    let fetch = try measureInitialFetch(size: size, store: store, deliveries: deliveries, plan: plan)
    withExtendedLifetime(forwarder) {}
    withExtendedLifetime(controller) {}

    // 4. Links and unlinks of a many-to-many relationship the request reads.
    try ManyToManyBenchmark.populate(database)
    let (linkWarmUp, linkRepetitions) = plan.incrementalRepetitions(size)
    let links = try ManyToManyBenchmark(database: database, probe: probe).run(
        size: size, warmUp: linkWarmUp, repetitions: min(linkRepetitions, 51),
        baselineRepetitions: plan.baselineRepetitions(size))

    let changes = Change.allCases.map { ChangeFigures(size: size, change: $0, ours: ours[$0]!, baseline: base[$0]!) }
    return (changes, fetch, size == plan.memorySize ? memory : nil, links)
}

/// A new controller vs a plain GRDB fetch of the same rows, in the same order, alternately.
@discardableResult
func measureInitialFetch(size: Int, store: Store, deliveries: DispatchQueue, plan: Plan) throws -> FetchFigures {
    let (fetchWarmUp, fetchRepetitions) = plan.fetchRepetitions(size)
    var oursFetch = Samples(), plainFetch = Samples()
    for round in 0..<(fetchWarmUp + fetchRepetitions) {
        let start = now()
        let fresh = try ResultsController(store: store, request: Note.Fetches.byNotebook, deliveryQueue: deliveries)
        let oursTime = now() - start
        withExtendedLifetime(fresh) {}
        let plainStart = now()
        let notes = try store.read { db in
            try Note.order(Column("pinned").desc, Column("title"), Column("id")).fetchAll(db)
        }
        let plainTime = now() - plainStart
        guard notes.count == size else { throw BenchmarkError.resultsDiffer("plain fetch found \(notes.count)") }
        if round >= fetchWarmUp {
            oursFetch.nanoseconds.append(oursTime)
            plainFetch.nanoseconds.append(plainTime)
        }
    }
    log("   initial fetch: controller \(formatMilliseconds(oursFetch.medianMilliseconds)), GRDB \(formatMilliseconds(plainFetch.medianMilliseconds))")
    return FetchFigures(size: size, ours: oursFetch, plain: plainFetch)
}

// MARK: - Report

func machineDescription() -> String {
    var model = "unknown CPU"
    if let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
        let line = info.split(separator: "\n").first(where: { $0.hasPrefix("model name") }),
        let name = line.split(separator: ":", maxSplits: 1).last
    {
        model = name.trimmingCharacters(in: .whitespaces)
    }
    let memory = Double(ProcessInfo.processInfo.physicalMemory) / 1_073_741_824
    return "\(ProcessInfo.processInfo.activeProcessorCount) cores (\(model)), \(String(format: "%.0f", memory)) GiB"
}

func formatRate(_ rowsPerSecond: Double) -> String {
    rowsPerSecond >= 10_000 ? String(format: "%.0fk rows/s", rowsPerSecond / 1000) : String(format: "%.0f rows/s", rowsPerSecond)
}

func report(
    changes: [ChangeFigures], fetches: [FetchFigures], memory: MemoryFigures?, links: [ManyToManyBenchmark.Figures],
    history: HistoryBenchmark.Figures?, plan: Plan
) {
    let date = ISO8601DateFormatter.string(from: Date(), timeZone: TimeZone(identifier: "UTC")!, formatOptions: [.withFullDate])
    print("Strata benchmarks, \(date), \(machineDescription())")
    print("Note.Fetches.byNotebook: \(NotesDatabase.notebookCount) notebook sections; release build; medians (p90) of the measured runs, after warm-up.")
    print("")
    if !changes.isEmpty {
        print("One-row change, commit → batch delivered")
        print("")
        print("| notes | change | Strata incremental | runs | refetch + diff baseline | runs | baseline ÷ Strata |")
        print("| ---: | --- | ---: | ---: | ---: | ---: | ---: |")
        for figure in changes {
            let ours = figure.ours, base = figure.baseline
            print(
                "| \(formatCount(figure.size)) | \(figure.change.rawValue) "
                    + "| \(formatMilliseconds(ours.medianMilliseconds)) (\(formatMilliseconds(ours.percentile(0.9)))) | \(ours.count) "
                    + "| \(formatMilliseconds(base.medianMilliseconds)) (\(formatMilliseconds(base.percentile(0.9)))) | \(base.count) "
                    + "| \(formatRatio(base.medianMilliseconds / ours.medianMilliseconds)) |")
        }
        print("")
        print("Many-to-many: the notes of one tag (`Store.request(Tag.notes, of:)`), a link or unlink → batch delivered")
        print("")
        print("| notes | listed | change | Strata incremental | runs | refetch + diff baseline | runs | baseline ÷ Strata |")
        print("| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |")
        for figure in links {
            let ours = figure.ours, base = figure.baseline
            print(
                "| \(formatCount(figure.size)) | \(formatCount(figure.listed)) | \(figure.kind.rawValue) "
                    + "| \(formatMilliseconds(ours.medianMilliseconds)) (\(formatMilliseconds(ours.percentile(0.9)))) | \(ours.count) "
                    + "| \(formatMilliseconds(base.medianMilliseconds)) (\(formatMilliseconds(base.percentile(0.9)))) | \(base.count) "
                    + "| \(formatRatio(base.medianMilliseconds / ours.medianMilliseconds)) |")
        }
        print("")
        print("Initial fetch into \(NotesDatabase.notebookCount) sections vs plain GRDB `Note.order(pinned.desc, title, id).fetchAll(db)`")
        print("")
        print("| notes | Strata ResultsController init | plain GRDB fetchAll | runs | Strata ÷ GRDB |")
        print("| ---: | ---: | ---: | ---: | ---: |")
        for figure in fetches {
            print(
                "| \(formatCount(figure.size)) | \(formatMilliseconds(figure.ours.medianMilliseconds)) "
                    + "| \(formatMilliseconds(figure.plain.medianMilliseconds)) | \(figure.ours.count) "
                    + "| \(formatRatio(figure.ours.medianMilliseconds / figure.plain.medianMilliseconds)) |")
        }
        if let memory {
            print("")
            print(
                "Peak RSS (VmHWM) with the \(formatCount(memory.size))-note controller: \(ProcessMemory.format(memory.peakAfterInit)) "
                    + "(RSS before its init \(ProcessMemory.format(memory.residentBefore)), after \(ProcessMemory.format(memory.residentAfterInit))"
                    + (memory.peakWasReset ? "; peak reset just before the init" : "; peak not resettable: includes the setup") + ")")
        }
    }
    if let history {
        print("")
        print("Change history: write throughput with history recorded and without, same run (medians of \(history.throughput.first?.on.count ?? 0) alternating rounds)")
        print("")
        print("| workload | rows | history on | history off | on ÷ off |")
        print("| --- | ---: | ---: | ---: | ---: |")
        for figure in history.throughput {
            let on = Double(figure.rows) / (figure.on.medianMilliseconds / 1000)
            let off = Double(figure.rows) / (figure.off.medianMilliseconds / 1000)
            print("| \(figure.workload) | \(formatCount(figure.rows)) | \(formatRate(on)) | \(formatRate(off)) | \(String(format: "%.0f %%", 100 * on / off)) |")
        }
        print("")
        print("Another process retitles one note per commit (5 to 25 ms apart); this process's controller, at \(formatCount(history.cost?.size ?? 0)) notes: commit returned in the writer → batch delivered here")
        print("")
        print("| check interval | p50 | p90 | p99 | max | commits timed | batches | commits not found in a batch |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for figure in history.latency {
            let samples = figure.samples
            print("| \(formatInterval(figure.interval))\(figure.interval == .milliseconds(50) ? " (default)" : "") | \(formatMilliseconds(samples.medianMilliseconds)) | \(formatMilliseconds(samples.percentile(0.9))) | \(formatMilliseconds(samples.percentile(0.99))) | \(formatMilliseconds(samples.percentile(1))) | \(samples.count) | \(figure.deliveries) | \(figure.unmatched) |")
        }
        if let cost = history.cost {
            print("")
            print("A one-row change (retitle, a move) at \(formatCount(cost.size)) notes: local commit → batch, and another process's commit applied here (`checkForExternalCommits()` → batch), medians (p90)")
            print("")
            print("| local | another process's | full fetches for the other process's \(cost.external.count) |")
            print("| ---: | ---: | ---: |")
            print("| \(formatMilliseconds(cost.local.medianMilliseconds)) (\(formatMilliseconds(cost.local.percentile(0.9)))) | \(formatMilliseconds(cost.external.medianMilliseconds)) (\(formatMilliseconds(cost.external.percentile(0.9)))) | \(cost.externalFullFetches) |")
        }
    }
    print("")
    print("Aims")
    if let history {
        for figure in history.throughput {
            let ratio = figure.off.medianMilliseconds / figure.on.medianMilliseconds
            print("- history on ≥ 80 % of off, \(figure.workload): \(ratio >= 0.8 ? "met" : "MISSED") (\(String(format: "%.0f %%", 100 * ratio)))")
        }
        for figure in history.latency where figure.interval == .milliseconds(50) {
            let p99 = figure.samples.percentile(0.99)
            print("- another process → batch p99 < 100 ms with the default interval: \(p99 < 100 ? "met" : "MISSED") (\(formatMilliseconds(p99)))")
        }
        if let cost = history.cost {
            print("- another process's one-row change at \(formatCount(cost.size)) applied incrementally: \(cost.externalFullFetches == 0 ? "met" : "MISSED") (\(cost.externalFullFetches) full fetches; \(formatMilliseconds(cost.external.medianMilliseconds)) vs \(formatMilliseconds(cost.local.medianMilliseconds)) local)")
        }
    }
    for figure in changes where figure.size == 100_000 {
        let ratio = figure.baseline.medianMilliseconds / figure.ours.medianMilliseconds
        let met = ratio >= 100 && figure.ours.medianMilliseconds < 2
        print("- 100k \(figure.change.rawValue): ≥100× and < 2 ms: \(met ? "met" : "MISSED") (\(formatRatio(ratio)), \(formatMilliseconds(figure.ours.medianMilliseconds)))")
    }
    for figure in fetches where figure.size == 100_000 {
        let ratio = figure.ours.medianMilliseconds / figure.plain.medianMilliseconds
        print("- 100k initial fetch within 1.2× of GRDB: \(ratio <= 1.2 ? "met" : "MISSED") (\(formatRatio(ratio)))")
    }
}

// MARK: - Large lists

struct LargeListFigures {
    var differences: [IdentityDifferenceBenchmark.Figures] = []
    var kCommits: [LargeCommitsBenchmark.Figures] = []
    var fallback: [LargeCommitsBenchmark.Figures] = []
}

/// The identity difference, commits of k rows, and the fallback path, at `plan.largeSize`.
func benchmarkLargeLists(plan: Plan) throws -> LargeListFigures {
    var figures = LargeListFigures()
    let all = !plan.largeListsOnly
    if all || plan.diffOnly {
        log("== identity difference")
        var difference = IdentityDifferenceBenchmark()
        difference.strataRuns = (plan.diffRuns >= 21 ? 3 : 1, plan.diffRuns)
        figures.differences = try difference.run(rows: plan.largeSize, withStdlib: plan.withStdlib)
    }
    guard all || plan.kCommitsOnly || plan.fallbackOnly else { return figures }
    let size = plan.largeSize
    log("== large commits: \(formatCount(size)) notes in \(NotesDatabase.notebookCount) notebooks")
    let database = try NotesDatabase(noteCount: size, seed: 43)
    defer { database.remove() }
    let deliveries = DispatchQueue(label: "strata.benchmarks.large")
    let probe = LatencyProbe(store: database.store)
    let controller = try ResultsController(store: database.store, request: Note.Fetches.byNotebook, deliveryQueue: deliveries)
    let forwarder = BatchForwarder(probe: probe)
    controller.coordinate(forwarder)
    controller.waitForDeliveries()
    var bench = LargeCommitsBenchmark(database: database, probe: probe, controller: controller, deliveries: deliveries)
    if all || plan.kCommitsOnly { figures.kCommits = try bench.kCommits(plan.kValues) }
    if all || plan.fallbackOnly { figures.fallback = try bench.fallback() }
    withExtendedLifetime(forwarder) {}
    return figures
}

func reportLargeLists(_ figures: LargeListFigures, plan: Plan) {
    if !figures.differences.isEmpty {
        print("")
        print("Identity difference, `ChangeBatch(from:to:)` vs the standard library's `difference(from:).inferringMoves()` on the ids")
        print("")
        print("| shape | item | Strata | runs | batch: deletes / inserts / moves | CollectionDifference | runs | removals / insertions / moves | stdlib ÷ Strata |")
        print("| --- | --- | ---: | ---: | --- | ---: | ---: | --- | ---: |")
        for figure in figures.differences {
            let b = figure.batchCounts
            var line = "| \(figure.shape) | \(figure.item) "
                + "| \(formatMilliseconds(figure.strata.medianMilliseconds)) (\(formatMilliseconds(figure.strata.percentile(0.9)))) "
                + "| \(figure.strata.count) | \(b.deletes) / \(b.inserts) / \(b.moves) "
            if let stdlib = figure.stdlib, let c = figure.stdlibCounts {
                line += "| \(formatMilliseconds(stdlib.medianMilliseconds)) | \(stdlib.count) | \(c.removals) / \(c.insertions) / \(c.moves) "
                    + "| \(formatRatio(stdlib.medianMilliseconds / figure.strata.medianMilliseconds)) |"
            } else {
                line += "| | | | |"
            }
            print(line)
        }
    }
    func table(_ title: String, _ rows: [LargeCommitsBenchmark.Figures], baselineName: String) {
        guard !rows.isEmpty else { return }
        print("")
        print(title)
        print("")
        print("| change | rows changed | Strata | runs | \(baselineName) | runs | baseline ÷ Strata |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        for figure in rows {
            var line = "| \(figure.label) | \(formatCount(figure.changedRows)) "
                + "| \(formatMilliseconds(figure.ours.medianMilliseconds)) (\(formatMilliseconds(figure.ours.percentile(0.9)))) | \(figure.ours.count) "
            if let base = figure.baseline {
                line += "| \(formatMilliseconds(base.medianMilliseconds)) (\(formatMilliseconds(base.percentile(0.9)))) | \(base.count) "
                    + "| \(formatRatio(base.medianMilliseconds / figure.ours.medianMilliseconds)) |"
            } else {
                line += "| | | |"
            }
            print(line)
        }
    }
    let size = formatCount(plan.largeSize)
    table("Commits of k retitled notes at \(size), commit → batch delivered", figures.kCommits, baselineName: "refetch + diff baseline")
    table(
        "The fallback path at \(size): large commits (commit → batch), options (setter → batch), resume() (→ reload; "
            + "the baseline column is a plain GRDB refetch without a difference)",
        figures.fallback, baselineName: "baseline")
    print("")
    print("Aims")
    for figure in figures.differences where figure.shape.sections == 50 && figure.item == "Note" {
        let ms = figure.strata.medianMilliseconds
        print("- identity difference of \(figure.shape): under 60 ms: \(ms < 60 ? "met" : "MISSED") (\(formatMilliseconds(ms)))")
    }
    for figure in figures.kCommits {
        guard let base = figure.baseline else { continue }
        let ratio = base.medianMilliseconds / figure.ours.medianMilliseconds
        let needed = figure.changedRows <= 1_000 ? 2.0 : 1.0
        print("- \(figure.label): ≥ \(formatRatio(needed)) the baseline: \(ratio >= needed ? "met" : "MISSED") (\(formatRatio(ratio)))")
    }
}

// MARK: - Main

if CommandLine.arguments.dropFirst().first == HistoryBenchmark.childFlag {
    HistoryBenchmark.child(arguments: Array(CommandLine.arguments.dropFirst(2)))
}
let plan = Plan(arguments: Array(CommandLine.arguments.dropFirst()))
#if DEBUG
log("warning: a debug build; run `swift run -c release StrataBenchmarks` for meaningful figures")
#endif
var changes: [ChangeFigures] = []
var fetches: [FetchFigures] = []
var memory: MemoryFigures?
var links: [ManyToManyBenchmark.Figures] = []
var large = LargeListFigures()
var history: HistoryBenchmark.Figures?
let started = now()

/// The ordered-list benchmark, printed at once.
func runOrderedList(_ plan: Plan) {
    do {
        log("ordered list: \(plan.orderedSize) todos, \(plan.orderedMoves) moves")
        try OrderedListBenchmark(
            size: plan.orderedSize, moves: plan.orderedMoves, loading: plan.orderedBatched ? .batched() : .eager
        ).run().printReport()
    } catch {
        log("error: \(error)")
        exit(1)
    }
}

if plan.historyThroughputOnly {
    do {
        for figure in try HistoryBenchmark.throughput(rounds: 5) {
            print("\(figure.workload): on \(formatMilliseconds(figure.on.medianMilliseconds)), off \(formatMilliseconds(figure.off.medianMilliseconds)), on ÷ off throughput \(String(format: "%.0f %%", 100 * figure.off.medianMilliseconds / figure.on.medianMilliseconds))")
        }
    } catch {
        log("error: \(error)")
        exit(1)
    }
    exit(0)
}

if plan.batchedOpenOnly {
    do {
        let database = try NotesDatabase(noteCount: plan.sizes[0])
        defer { database.remove() }
        log("populated; opening")
        for _ in 0..<20 {
            let controller = try ResultsController(
                store: database.store, request: Note.Fetches.byNotebook, loading: BatchedLoadingBenchmark.loading)
            withExtendedLifetime(controller) {}
        }
    } catch {
        log("error: \(error)")
        exit(1)
    }
    exit(0)
}
if plan.batchedOnly {
    do {
        let figures = try plan.sizes.map { try BatchedLoadingBenchmark.run(size: $0, repetitions: $0 >= 1_000_000 ? 3 : 7) }
        BatchedLoadingBenchmark.report(figures)
    } catch {
        log("error: \(error)")
        exit(1)
    }
    log("total \(String(format: "%.0f", Double(now() - started) / 1e9)) s")
    exit(0)
}
if plan.orderedOnly {
    runOrderedList(plan)
    log("total \(String(format: "%.0f", Double(now() - started) / 1e9)) s")
    exit(0)
}
do {
    if plan.largeListsOnly {
        large = try benchmarkLargeLists(plan: plan)
        reportLargeLists(large, plan: plan)
        log("total \(String(format: "%.0f", Double(now() - started) / 1e9)) s")
        exit(0)
    }
    // The memory size first, so that its figures are not inflated by earlier sizes.
    let order = plan.sizes.filter { $0 == plan.memorySize } + plan.sizes.filter { $0 != plan.memorySize }
    for size in order where !plan.historyOnly {
        let figures = try benchmark(size: size, plan: plan)
        changes += figures.changes
        fetches.append(figures.fetch)
        if let figure = figures.memory { memory = figure }
        links += figures.links
    }
    if !plan.historyOnly { large = try benchmarkLargeLists(plan: plan) }
    if !plan.incrementalOnly && !plan.fetchOnly {
        history = try HistoryBenchmark.run(size: 100_000, quick: plan.quick)
    }
} catch {
    log("error: \(error)")
    exit(1)
}
changes.sort { ($0.size, Change.allCases.firstIndex(of: $0.change)!) < ($1.size, Change.allCases.firstIndex(of: $1.change)!) }
fetches.sort { $0.size < $1.size }
links.sort { ($0.size, $0.kind == .link ? 0 : 1) < ($1.size, $1.kind == .link ? 0 : 1) }
report(changes: changes, fetches: fetches, memory: memory, links: links, history: history, plan: plan)
if !plan.historyOnly { reportLargeLists(large, plan: plan) }
if plan.ordered && !plan.historyOnly {
    runOrderedList(plan)
}
log("total \(String(format: "%.0f", Double(now() - started) / 1e9)) s")
