// The aims tables of Strata's benchmarks, from a baseline stored by package-benchmark:
//
//     swift package --allow-writing-to-package-directory benchmark baseline update latest
//     swift run -c release StrataAims latest
//
// Benchmarks come in pairs named `<scenario>.<case>.<side>`, Strata beside its baseline (a
// refetch + diff, plain GRDB, the standard library's difference), measured in the same run.
// This prints each pair side by side, medians (p90), with their ratio, and whether each aim
// of Benchmarks/README.md is met. Percentiles come from package-benchmark's histograms.
import Benchmark
import Foundation

// MARK: - The stored baseline

struct Identifier: Codable, Hashable {
    var target: String
    var name: String
}

struct Machine: Codable {
    var hostname: String
    var processors: Int
    var processorType: String
    var memory: Int
    var kernelVersion: String
}

struct StoredBaseline: Decodable {
    var baselineName: String
    var machine: Machine
    var results: [Identifier: [BenchmarkResult]]
}

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.contains("-h") || arguments.contains("--help") || arguments.count > 1 {
    FileHandle.standardError.write(Data("usage: StrataAims [BASELINE]   (default: latest; read from .benchmarkBaselines/StrataBenchmarks/ and StrataSyncBenchmarks/)\n".utf8))
    exit(arguments.count > 1 ? 2 : 0)
}
let baselineName = arguments.first ?? "latest"
// One stored baseline per benchmark target: Strata's own, and the sync's (which needs PostgreSQL).
var stored: [StoredBaseline] = []
for target in ["StrataBenchmarks", "StrataSyncBenchmarks"] {
    let path = ".benchmarkBaselines/\(target)/\(baselineName)/results.json"
    guard FileManager.default.fileExists(atPath: path) else { continue }
    do {
        stored.append(try JSONDecoder().decode(StoredBaseline.self, from: Data(contentsOf: URL(fileURLWithPath: path))))
    } catch {
        FileHandle.standardError.write(Data("cannot read the baseline \(path): \(error)\n".utf8))
        exit(1)
    }
}
guard let baseline = stored.first else {
    FileHandle.standardError.write(Data("no baseline '\(baselineName)' in .benchmarkBaselines/StrataBenchmarks/ or .benchmarkBaselines/StrataSyncBenchmarks/\n".utf8))
    exit(1)
}
let results = Dictionary(stored.flatMap { $0.results.map { ($0.key.name, $0.value) } }, uniquingKeysWith: { first, _ in first })

// MARK: - Figures

/// One metric of one benchmark.
struct Figure {
    var statistics: Statistics
    /// The factor from the stored values to milliseconds (nil: a count).
    var toMilliseconds: Double?

    func percentile(_ p: Double) -> Double { Double(statistics.percentiles(for: [p])[0]) }
    var runs: Int { statistics.measurementCount }
    var median: Double { milliseconds(50) }
    func milliseconds(_ p: Double) -> Double { percentile(p) * (toMilliseconds ?? 1) }
}

/// The metric `metric` (a custom metric's name, or a package-benchmark metric) of `benchmark`.
@MainActor func figure(_ benchmark: String, _ metric: String) -> Figure? {
    guard let results = results[benchmark] else { return nil }
    for result in results {
        switch result.metric {
        case .custom(let name, _, _) where name == metric:
            return Figure(statistics: result.statistics, toMilliseconds: name.hasSuffix("(us)") ? 1e-3 : nil)
        case .wallClock where metric == "wallClock", .cpuTotal where metric == "cpuTotal":
            return Figure(statistics: result.statistics, toMilliseconds: 1e-6)
        case .mallocCountTotal where metric == "mallocCountTotal", .memoryLeakedBytes where metric == "memoryLeakedBytes",
            .peakMemoryResident where metric == "peakMemoryResident":
            return Figure(statistics: result.statistics, toMilliseconds: nil)
        default:
            continue
        }
    }
    return nil
}

func milliseconds(_ value: Double) -> String {
    if value >= 100 { return String(format: "%.0f ms", value) }
    if value >= 10 { return String(format: "%.1f ms", value) }
    if value >= 1 { return String(format: "%.2f ms", value) }
    return String(format: "%.3f ms", value)
}

func ratio(_ value: Double) -> String {
    if value >= 100 { return String(format: "%.0f×", value) }
    if value >= 10 { return String(format: "%.1f×", value) }
    return String(format: "%.2f×", value)
}

func countLabel(_ count: Int) -> String {
    if count >= 1_000_000, count % 1_000_000 == 0 { return "\(count / 1_000_000)M" }
    if count >= 1_000, count % 1_000 == 0 { return "\(count / 1_000)k" }
    return "\(count)"
}

func number(_ value: Double) -> String {
    let formatter = NumberFormatter()
    formatter.numberStyle = .decimal
    formatter.maximumFractionDigits = 0
    return formatter.string(from: NSNumber(value: value)) ?? "\(value)"
}

func mebibytes(_ bytes: Double) -> String { String(format: "%.0f MiB", bytes / 1_048_576) }

/// "median (p90)".
func timing(_ figure: Figure?) -> String {
    guard let figure else { return "" }
    return "\(milliseconds(figure.median)) (\(milliseconds(figure.milliseconds(90))))"
}

/// "median (min–max)".
func spread(_ figure: Figure?) -> String {
    guard let figure else { return "" }
    return "\(milliseconds(figure.median)) (\(milliseconds(figure.milliseconds(0)))–\(milliseconds(figure.milliseconds(100))))"
}

func runs(_ figure: Figure?) -> String { figure.map { "\($0.runs)" } ?? "" }
func mallocs(_ figure: Figure?) -> String { figure.map { number($0.percentile(50)) } ?? "" }

func table(_ title: String, _ header: [String], _ alignments: [Bool], _ rows: [[String]]) {
    guard !rows.isEmpty else { return }
    print("")
    print(title)
    print("")
    print("| " + header.joined(separator: " | ") + " |")
    print("| " + alignments.map { $0 ? "---:" : "---" }.joined(separator: " | ") + " |")
    for row in rows { print("| " + row.joined(separator: " | ") + " |") }
}

var aims: [String] = []
@MainActor func aim(_ text: String, _ met: Bool, _ figures: String) {
    aims.append("- \(text): \(met ? "met" : "MISSED") (\(figures))")
}

let sizes = [10_000, 100_000, 1_000_000]
let changes = [("update", "update (move in section)"), ("insert", "insert"), ("delete", "delete")]

print("Strata benchmarks, baseline '\(baseline.baselineName)', \(baseline.machine.processors) cores (\(baseline.machine.processorType)), \(baseline.machine.memory) GB")
print("package-benchmark percentiles: medians (p90) of the measured runs, after warm-up; mallocs: median per iteration (every thread).")

// MARK: - One-row change, many-to-many, initial fetch

var rows: [[String]] = []
for size in sizes {
    for (metric, label) in changes {
        let ours = figure("OneRowChange.\(countLabel(size)).Strata", "\(metric) (us)")
        let base = figure("OneRowChange.\(countLabel(size)).RefetchDiff", "\(metric) (us)")
        guard ours != nil || base != nil else { continue }
        let r = ours.flatMap { o in base.map { $0.median / o.median } }
        rows.append([countLabel(size), label, timing(ours), runs(ours), timing(base), runs(base), r.map(ratio) ?? ""])
        if size == 100_000, let ours, let r {
            aim("100k \(label): ≥ 100× the baseline and < 2 ms", r >= 100 && ours.median < 2, "\(ratio(r)), \(milliseconds(ours.median))")
        }
    }
}
table(
    "One-row change, commit → batch delivered",
    ["notes", "change", "Strata incremental", "runs", "refetch + diff baseline", "runs", "baseline ÷ Strata"],
    [true, false, true, true, true, true, true], rows)
rows = []
for size in sizes {
    let ours = figure("OneRowChange.\(countLabel(size)).Strata", "mallocCountTotal")
    let base = figure("OneRowChange.\(countLabel(size)).RefetchDiff", "mallocCountTotal")
    guard ours != nil || base != nil else { continue }
    rows.append([countLabel(size), mallocs(ours), mallocs(base)])
}
table(
    "Allocations per round of three one-row changes (update, insert, delete), commit to batch, every thread",
    ["notes", "Strata mallocs", "refetch + diff mallocs"], [true, true, true], rows)

rows = []
for size in sizes {
    for kind in ["link", "unlink"] {
        let ours = figure("ManyToMany.\(countLabel(size)).Strata", "\(kind) (us)")
        let base = figure("ManyToMany.\(countLabel(size)).RefetchDiff", "\(kind) (us)")
        guard ours != nil || base != nil else { continue }
        let listed = (ours ?? base).flatMap { _ in
            figure("ManyToMany.\(countLabel(size)).Strata", "notes listed") ?? figure("ManyToMany.\(countLabel(size)).RefetchDiff", "notes listed")
        }
        let r = ours.flatMap { o in base.map { $0.median / o.median } }
        rows.append([
            countLabel(size), listed.map { number($0.percentile(50)) } ?? "", kind, timing(ours), runs(ours), timing(base), runs(base),
            r.map(ratio) ?? "",
        ])
    }
}
table(
    "Many-to-many: the notes of one tag (`Store.request(Tag.notes, of:)`), a link or unlink → batch delivered",
    ["notes", "listed", "change", "Strata incremental", "runs", "refetch + diff baseline", "runs", "baseline ÷ Strata"],
    [true, true, false, true, true, true, true, true], rows)

rows = []
for size in sizes {
    let ours = figure("InitialFetch.\(countLabel(size)).Strata", "wallClock")
    let plain = figure("InitialFetch.\(countLabel(size)).GRDB", "wallClock")
    guard ours != nil || plain != nil else { continue }
    let r = ours.flatMap { o in plain.map { o.median / $0.median } }
    func held(_ side: String) -> String {
        figure("InitialFetch.\(countLabel(size)).\(side)", "memoryLeakedBytes").map { mebibytes($0.percentile(50)) } ?? ""
    }
    let peak = figure("InitialFetch.\(countLabel(size)).Strata", "peakMemoryResident")
    rows.append([
        countLabel(size), timing(ours), timing(plain), runs(ours), r.map(ratio) ?? "",
        mallocs(figure("InitialFetch.\(countLabel(size)).Strata", "mallocCountTotal")),
        mallocs(figure("InitialFetch.\(countLabel(size)).GRDB", "mallocCountTotal")), held("Strata"), held("GRDB"),
        peak.map { mebibytes($0.percentile(100)) } ?? "",
    ])
    if size == 100_000, let r { aim("100k initial fetch within 1.2× of GRDB", r <= 1.2, ratio(r)) }
}
table(
    "Initial fetch into 50 sections vs plain GRDB `Note.order(pinned.desc, title, id).fetchAll(db)`; held: requested bytes allocated and not freed (malloc interposer); peak RSS: sampled, the store's setup included",
    [
        "notes", "Strata `ResultsController.init`", "plain GRDB `fetchAll`", "runs", "Strata ÷ GRDB", "Strata mallocs", "GRDB mallocs",
        "Strata holds", "GRDB's array holds", "Strata: peak RSS of the process",
    ],
    [true, true, true, true, true, true, true, true, true, true], rows)

// MARK: - Large lists

rows = []
for (shape, item) in [("Sectioned", "`Note` (row ids), 50 sections"), ("SectionedUUID", "`UUIDItem` (generic ids), 50 sections"), ("Flat", "`Note`, 1 section")] {
    let name = "IdentityDifference.\(shape).Strata"
    guard let ours = figure(name, "wallClock") else { continue }
    let counts = ["deletes", "inserts", "moves"].compactMap { figure(name, $0).map { number($0.percentile(50)) } }.joined(separator: " / ")
    var row = [item, timing(ours), runs(ours), mallocs(figure(name, "mallocCountTotal")), counts]
    if shape == "Sectioned", let stdlib = figure("IdentityDifference.Sectioned.Stdlib", "wallClock") {
        let stdlibCounts = ["removals", "insertions", "moves"].compactMap {
            figure("IdentityDifference.Sectioned.Stdlib", $0).map { number($0.percentile(50)) }
        }.joined(separator: " / ")
        row += [milliseconds(stdlib.median), runs(stdlib), stdlibCounts, ratio(stdlib.median / ours.median)]
    } else {
        row += ["", "", "", ""]
    }
    rows.append(row)
    if shape == "Sectioned" { aim("identity difference of 100k rows in 50 sections under 60 ms", ours.median < 60, milliseconds(ours.median)) }
}
table(
    "Identity difference, 100k rows, 10% deleted, 10% inserted, 2% moved: `ChangeBatch(from:to:)` vs the standard library's `difference(from:).inferringMoves()` on the ids",
    ["item, shape", "Strata", "runs", "mallocs", "batch: deletes / inserts / moves", "`CollectionDifference`", "runs", "removals / insertions / moves", "stdlib ÷ Strata"],
    [false, true, true, true, false, true, true, false, true], rows)

rows = []
let kCommits = [10, 100, 1_000, 10_000, 25_000, 50_000, 100_000]
let kOpens = ["Eager", "Batched"].map { figure("KCommit.Open.\($0)", "wallClock") }
for k in kCommits {
    let ours = figure("KCommit.\(countLabel(k)).Strata", "commit to batch (us)")
    let base = figure("KCommit.\(countLabel(k)).RefetchDiff", "commit to batch (us)")
    let batched = figure("KCommit.\(countLabel(k)).Batched", "commit to batch (us)")
    guard ours != nil || base != nil || batched != nil else { continue }
    let r = ours.flatMap { o in base.map { $0.median / o.median } }
    // Each loading's commit beside a fresh open of the same loading, in the same run.
    let opens = [ours, batched].enumerated().map { side, commit in commit.flatMap { c in kOpens[side].map { $0.median / c.median } } }
    rows.append([
        number(Double(k)), spread(ours), runs(ours), opens[0].map(ratio) ?? "", spread(batched), runs(batched), opens[1].map(ratio) ?? "",
        timing(base), runs(base), r.map(ratio) ?? "",
    ])
    if let r, k <= 25_000 {
        let needed = k <= 1_000 ? 2.0 : 1.0
        aim("\(number(Double(k))) retitled: ≥ \(ratio(needed)) the baseline", r >= needed, ratio(r))
    }
    for (side, loading) in ["eager", "batched"].enumerated() {
        guard let open = opens[side] else { continue }
        let needed = k <= 10_000 ? 2.0 : 1.0
        aim("\(number(Double(k))) retitled, \(loading): ≥ \(ratio(needed)) a fresh open", open >= needed, ratio(open))
    }
}
table(
    "Commits of k retitled notes at 100k, commit → batch (or reload) delivered, medians (min–max); a fresh open: "
        + kOpens.enumerated().map { "\($0 == 0 ? "eager" : "batched") \(spread($1))" }.joined(separator: ", "),
    ["k", "eager", "runs", "open ÷ commit", "batched", "runs", "open ÷ commit", "refetch + diff baseline", "runs", "baseline ÷ eager"],
    [true, true, true, true, true, true, true, true, true, true], rows)

// The calibration of `RefetchPolicy` (Sources/Strata/Results/Engine/RefetchPolicy.swift): what
// one more changed row costs the incremental path (the slope between two commits well under
// the break-even, applied incrementally: eager 1,000 and 10,000 rows, batched 10 and 100), and
// what a commit of every row (always a refetch) costs per result row. The policy refetches
// when changed rows × the first exceed result rows × the second.
rows = []
for (loading, small, large) in [("Strata", 1_000, 10_000), ("Batched", 10, 100)] {
    guard let low = figure("KCommit.\(countLabel(small)).\(loading)", "commit to batch (us)"),
        let high = figure("KCommit.\(countLabel(large)).\(loading)", "commit to batch (us)"),
        let full = figure("KCommit.100k.\(loading)", "commit to batch (us)")
    else { continue }
    let perChanged = (high.median - low.median) / Double(large - small) * 1e6  // ns per changed row
    let perResult = full.median * 1e6 / 100_000  // ns per result row
    rows.append([
        loading == "Strata" ? "eager" : "batched", "\(number(Double(small))) → \(number(Double(large)))",
        String(format: "%.0f ns", perChanged), String(format: "%.0f ns", perResult), String(format: "%.1f%%", perResult / perChanged * 100),
    ])
}
table(
    "Calibration of `RefetchPolicy` (`RefetchPolicy.eagerCosts`, `.batchedCosts`; update them when these moved): a changed row's cost through the incremental path, a result row's through a refetch",
    ["loading", "slope between (rows)", "a changed row, incremental", "a result row, refetch (every row changed)", "break-even: changed ÷ results"],
    [false, true, true, true, true], rows)

rows = []
for (name, label) in [
    ("LargeCommit", "commit: 10% deleted, 10% inserted, 1% retitled, 1% to another notebook"),
    ("Retitle30", "commit: 30% retitled"),
] {
    let ours = figure("Fallback.\(name).Strata", "commit to batch (us)")
    let base = figure("Fallback.\(name).RefetchDiff", "commit to batch (us)")
    guard ours != nil || base != nil else { continue }
    let r = ours.flatMap { o in base.map { $0.median / o.median } }
    rows.append([label, timing(ours), runs(ours), timing(base), runs(base), r.map(ratio) ?? ""])
}
for (name, label) in [("Filter", "filter (hides about half)"), ("Comparator", "comparator (titles reversed)")] {
    for (metric, verb) in [("set (us)", "set"), ("removed (us)", "removed")] {
        guard let ours = figure("Fallback.\(name).Strata", metric) else { continue }
        rows.append(["\(label) \(verb), setter → batch", timing(ours), runs(ours), "", "", ""])
    }
}
if let ours = figure("Fallback.Resume.Strata", "to reload (us)") {
    let base = figure("Fallback.Resume.GRDB", "to reload (us)")
    rows.append([
        "`resume()` after the large commit → reload delivered (baseline: a plain GRDB refetch, no difference)", timing(ours), runs(ours),
        timing(base), runs(base), base.map { ratio($0.median / ours.median) } ?? "",
    ])
}
table(
    "The fallback path at 100k",
    ["change", "Strata", "runs", "baseline", "runs", "baseline ÷ Strata"], [false, true, true, true, true, true], rows)

// MARK: - Ordered list

rows = []
for loading in ["Eager", "Batched"] {
    let name = "OrderedList.100k.\(loading)"
    guard let move = figure(name, "db.move commit to batch (us)") else { continue }
    let call = figure(name, "moveItem call (us)")
    let written = figure(name, "rows written per move")
    let rebalanced = figure(name, "rows rebalanced per move")
    rows.append([
        loading.lowercased(), "\(move.runs)", written.map { number($0.percentile(50)) } ?? "", written.map { number($0.percentile(100)) } ?? "",
        rebalanced.map { number($0.percentile(100)) } ?? "", milliseconds(move.median), milliseconds(move.milliseconds(90)),
        milliseconds(move.milliseconds(100)), call.map { milliseconds($0.median) } ?? "", call.map { milliseconds($0.milliseconds(90)) } ?? "",
    ])
    aim("ordered list of 100k, \(loading.lowercased()): commit → batch < 1 ms", move.median < 1, milliseconds(move.median))
    if let call { aim("ordered list of 100k, \(loading.lowercased()): `moveItem(from:to:)` ≤ 1 ms", call.median <= 1, milliseconds(call.median)) }
}
table(
    "Ordered list: 100,000 todos in one list, random moves (`db.move(_:in:of:after:)`, then `controller.moveItem(from:to:)`)",
    ["loading", "moves", "rows written per move: median", "max", "largest rebalance (rows)", "commit → batch: median", "p90", "max", "`moveItem` call: median", "p90"],
    [false, true, true, true, true, true, true, true, true, true], rows)

// MARK: - Batched loading

var open: [[String]] = [], memory: [[String]] = [], batchedChanges: [[String]] = [], reads: [[String]] = []
for size in [100_000, 1_000_000] {
    let label = countLabel(size)
    let batched = figure("BatchedOpen.\(label).Batched", "wallClock"), eager = figure("BatchedOpen.\(label).Eager", "wallClock")
    let plain = figure("BatchedOpen.\(label).GRDB", "wallClock")
    if batched != nil || eager != nil || plain != nil {
        func over(_ a: Figure?, _ b: Figure?) -> String { a.flatMap { a in b.map { ratio(a.median / $0.median) } } ?? "" }
        let cpu = ["Batched", "Eager", "GRDB"].map { figure("BatchedOpen.\(label).\($0)", "cpuTotal") }
        open.append([
            label, timing(batched), timing(eager), timing(plain), runs(plain), over(batched, plain), over(eager, plain),
            over(cpu[0], cpu[2]), over(cpu[1], cpu[2]),
        ])
        if let batched, let plain {
            aim("\(label) batched open ≤ 0.5× GRDB", batched.median / plain.median <= 0.5, ratio(batched.median / plain.median))
        }
        let held = ["Batched", "Eager"].map { figure("BatchedOpen.\(label).\($0)", "memoryLeakedBytes") }
        let peak = ["Batched", "Eager"].map { figure("BatchedOpen.\(label).\($0)", "peakMemoryResident") }
        func perRow(_ figure: Figure?) -> String { figure.map { "\(Int($0.percentile(50)) / size) B" } ?? "" }
        memory.append([
            label, held[0].map { mebibytes($0.percentile(50)) } ?? "", perRow(held[0]), held[1].map { mebibytes($0.percentile(50)) } ?? "",
            perRow(held[1]), peak[0].map { mebibytes($0.percentile(100)) } ?? "", peak[1].map { mebibytes($0.percentile(100)) } ?? "",
        ])
        if let bytes = held[0] {
            let perRowBytes = Int(bytes.percentile(50)) / size
            aim("\(label) batched: ≤ 100 bytes per row held", perRowBytes <= 100, "\(perRowBytes) B")
        }
    }
    var slowest: Double?
    for (metric, change) in changes {
        guard let ours = figure("BatchedChange.\(label).Strata", "\(metric) (us)") else { continue }
        batchedChanges.append([label, change, timing(ours), runs(ours)])
        slowest = max(slowest ?? 0, ours.median)
    }
    if let slowest { aim("\(label) batched one-row change < 1 ms", slowest < 1, "slowest median \(milliseconds(slowest))") }
    for (name, read) in [("BatchedReadAll", "every row"), ("BatchedReadRandom", "10,000 random")] {
        let b = figure("\(name).\(label).Batched", "wallClock"), e = figure("\(name).\(label).Eager", "wallClock")
        guard b != nil || e != nil else { continue }
        reads.append([label, read, timing(b), timing(e), b.flatMap { b in e.map { ratio(b.median / $0.median) } } ?? ""])
    }
}
table(
    "Batched loading (`.batched(pageSize: 64, cachedPages: 32)`): open (init and the first page read) against plain GRDB `fetchAll` of the full records in the same order; last two columns in process CPU time",
    ["notes", "batched", "eager", "plain GRDB fetchAll", "runs", "batched ÷ GRDB", "eager ÷ GRDB", "batched ÷ GRDB (CPU)", "eager ÷ GRDB (CPU)"],
    [true, true, true, true, true, true, true, true, true], open)
table(
    "Memory held by the controller after init (requested bytes allocated and not freed, malloc interposer), and the process's peak RSS (the store's setup included)",
    ["notes", "batched held", "per row", "eager held", "per row", "batched: peak RSS", "eager: peak RSS"],
    [true, true, true, true, true, true, true], memory)
table("One-row change on a batched controller, commit → batch delivered", ["notes", "change", "batched", "runs"], [true, false, true, true], batchedChanges)
table(
    "Reading rows from a new snapshot", ["notes", "read", "batched", "eager snapshot", "batched ÷ eager"], [true, false, true, true, true], reads)

// MARK: - Change history

rows = []
for (name, label, count) in [
    ("OneRowTx300", "1 row per transaction (300, a fresh file)", 300), ("OneRowTx2000", "1 row per transaction (2,000 in a row)", 2_000),
    ("OneRowTx10000", "1 row per transaction (10,000 in a row)", 10_000), ("HundredRowTx100", "100 rows per transaction (10,000 rows)", 10_000),
    ("TenThousandRowTx1", "10,000 rows in one transaction", 10_000),
] {
    guard let on = figure("HistoryWrite.\(name).On", "wallClock"), let off = figure("HistoryWrite.\(name).Off", "wallClock") else { continue }
    func rate(_ figure: Figure) -> String {
        let perSecond = Double(count) / (figure.median / 1000)
        return perSecond >= 10_000 ? String(format: "%.0fk rows/s", perSecond / 1000) : String(format: "%.0f rows/s", perSecond)
    }
    let share = off.median / on.median
    rows.append([label, rate(on), rate(off), "\(on.runs)", String(format: "%.0f %%", share * 100)])
    aim("history on ≥ 80 % of off, \(label)", share >= 0.8, String(format: "%.0f %%", share * 100))
}
table(
    "Change history: write throughput with history recorded and without (medians)",
    ["workload", "history on", "history off", "runs", "on ÷ off"], [false, true, true, true, true], rows)

rows = []
for interval in ["50ms", "5ms"] {
    let name = "CrossProcess.100k.Interval\(interval)"
    guard let latency = figure(name, "commit to batch (us)") else { continue }
    rows.append([
        interval == "50ms" ? "50 ms (default)" : "5 ms", milliseconds(latency.median), milliseconds(latency.milliseconds(90)),
        milliseconds(latency.milliseconds(99)), milliseconds(latency.milliseconds(100)), "\(latency.runs)",
        figure(name, "commits not found in a batch").map { number($0.percentile(50)) } ?? "",
    ])
    if interval == "50ms" {
        aim("another process → batch p99 < 100 ms with the default interval", latency.milliseconds(99) < 100, milliseconds(latency.milliseconds(99)))
    }
}
table(
    "Another process retitles one note per commit (5 to 25 ms apart); this process's controller at 100k notes: commit returned in the writer → batch delivered here",
    ["check interval", "p50", "p90", "p99", "max", "commits timed", "commits not found in a batch"], [false, true, true, true, true, true, true], rows)

if let local = figure("ExternalChange.100k.Local", "retitle (us)") {
    let other = figure("ExternalChange.100k.OtherProcess", "retitle (us)")
    let fetches = figure("ExternalChange.100k.OtherProcess", "full fetches")
    table(
        "A one-row change at 100k notes: local commit → batch, and another process's commit applied here (`checkForExternalCommits()` → batch)",
        ["local", "another process's", "full fetches for the other process's"], [true, true, true],
        [[timing(local), timing(other), fetches.map { number($0.percentile(100)) } ?? ""]])
    if let other, let fetches {
        let count = Int(fetches.percentile(100))
        aim(
            "another process's one-row change at 100k applied incrementally", count == 0,
            "\(count) full fetches; \(milliseconds(other.median)) vs \(milliseconds(local.median)) local")
    }
}

// MARK: - Sync through PostgreSQL

rows = []
var fileRows: [[String]] = []
for size in sizes {
    let ours = figure("InitialSync.\(countLabel(size)).Strata", "wallClock")
    let plain = figure("InitialSync.\(countLabel(size)).PostgresNIO", "wallClock")
    guard ours != nil || plain != nil else { continue }
    let r = ours.flatMap { o in plain.map { o.median / $0.median } }
    let copy = figure("InitialSync.\(countLabel(size)).PostgresNIOThenGRDB", "wallClock")
    let cpu = ["Strata", "PostgresNIO"].map { figure("InitialSync.\(countLabel(size)).\($0)", "cpuTotal") }
    let peak = figure("InitialSync.\(countLabel(size)).Strata", "peakMemoryResident")
    rows.append([
        countLabel(size), timing(ours), timing(plain), runs(ours), r.map(ratio) ?? "",
        cpu[0].flatMap { o in cpu[1].map { ratio(o.median / $0.median) } } ?? "",
        mallocs(figure("InitialSync.\(countLabel(size)).Strata", "mallocCountTotal")),
        mallocs(figure("InitialSync.\(countLabel(size)).PostgresNIO", "mallocCountTotal")), peak.map { mebibytes($0.percentile(100)) } ?? "",
        timing(copy), copy.flatMap { c in plain.map { ratio(c.median / $0.median) } } ?? "",
        ours.flatMap { o in copy.map { ratio(o.median / $0.median) } } ?? "",
    ])
    if let o = ours, let c = copy {
        let r = o.median / c.median
        aim("initial sync of \(countLabel(size)) objects into an empty store ≤ 0.6× the hand-written copy (postgres-nio read, plain GRDB write)", r <= 0.6, ratio(r))
    }
    if let o = ours, let relayed = figure("InitialSync.\(countLabel(size)).Relay", "wallClock") {
        let r = relayed.median / o.median
        aim("a user's initial sync of \(countLabel(size)) objects through a relay ≤ 1.5× the same sync over direct PostgreSQL", r <= 1.5, ratio(r))
    }
    let file = ["file (KiB)", "file vacuumed (KiB)", "file unsynced (KiB)"].map { figure("InitialSync.\(countLabel(size)).Strata", $0) }
    if let synced = file[0], let vacuumed = file[1], let unsynced = file[2] {
        let r = synced.median / unsynced.median
        fileRows.append([
            countLabel(size), mebibytes(synced.median * 1024), mebibytes(vacuumed.median * 1024), mebibytes(unsynced.median * 1024),
            ratio(r), ratio(vacuumed.median / unsynced.median),
        ])
        aim("a store synced with \(countLabel(size)) objects ≤ 1.3× the same store unsynced", r <= 1.3, ratio(r))
    }
}
table(
    "The store file after the initial sync (its log checkpointed), the same vacuumed, and the same store unsynced (a copy without the sync's tables and triggers, vacuumed)",
    ["objects", "synced file", "synced, vacuumed", "unsynced", "synced ÷ unsynced", "vacuumed ÷ unsynced"],
    [true, true, true, true, true, true], fileRows)
table(
    "Initial sync into an empty store (`StoreSync.sync()`: hello, every pull, each batch applied in one transaction) vs a plain postgres-nio read of the same rows, every column decoded; both open their connection; CPU: this process only (the server's is not counted). For the record, not the aim's baseline: the same read then written with plain GRDB into a new SQLite file (a hand-written copy: rows, server ids, the board index)",
    [
        "objects", "Strata `sync()`", "plain postgres-nio read", "runs", "Strata ÷ postgres-nio", "Strata ÷ postgres-nio (CPU)", "Strata mallocs",
        "postgres-nio mallocs", "Strata: peak RSS of the process", "read, then written with GRDB", "that ÷ postgres-nio",
        "Strata ÷ that",
    ],
    [true, true, true, true, true, true, true, true, true, true, true, true], rows)

rows = []
for size in sizes {
    guard let latency = figure("SyncLatency.\(countLabel(size)).Strata", "write to batch (us)") else { continue }
    rows.append([
        countLabel(size), milliseconds(latency.median), milliseconds(latency.milliseconds(90)), milliseconds(latency.milliseconds(99)),
        milliseconds(latency.milliseconds(100)), "\(latency.runs)",
    ])
    aim(
        "a write on device A → the batch in device B's controller, both online, p99 ≤ 50 ms (\(countLabel(size)) objects)",
        latency.milliseconds(99) <= 50, "p50 \(milliseconds(latency.median)), p99 \(milliseconds(latency.milliseconds(99)))")
}
table(
    "A write on device A (a card retitled) → the batch carrying it delivered by device B's `ResultsController`, both running `start()` (push on commit, pull on `NOTIFY`), Unix socket",
    ["objects", "p50", "p90", "p99", "max", "samples"], [true, true, true, true, true, true], rows)

rows = []
for (direction, verb) in [("SyncPush", "push: local changes pushed"), ("SyncPull", "pull: server changes applied")] {
    for change in [10_000] {
        for kind in ["Updates", "Inserts"] {
            let name = "\(direction).\(countLabel(change)).\(kind)"
            guard let time = figure(name, "wallClock") else { continue }
            let rate = Double(change) / (time.median / 1000)
            rows.append([verb, kind.lowercased(), number(Double(change)), timing(time), "\(time.runs)", number(rate)])
            aim("\(verb), \(kind.lowercased()): ≥ 10,000 row changes per second", rate >= 10_000, "\(number(rate)) per second")
        }
    }
}
table(
    "Push and pull throughput: a device in sync with 100k objects; push: changes made in one local transaction, `push()` until acknowledged; pull: changes made on the server with SQL, `pull()` until applied",
    ["direction", "changes", "rows", "time", "runs", "row changes per second (median)"], [false, false, true, true, true, true], rows)

print("")
print("Aims")
print("")
for line in aims { print(line) }
