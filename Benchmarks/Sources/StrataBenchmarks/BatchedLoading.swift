import Dispatch
import Foundation
import GRDB
import Strata

#if canImport(Glibc)
import Glibc
#endif

/// Batched loading (`ResultsLoading.batched`) beside plain GRDB and the eager controller, in
/// one run: opening, memory, a one-row change, and reading rows as a scrolling list does.
enum BatchedLoadingBenchmark {
    static let pageSize = 64
    static let cachedPages = 32
    static var loading: ResultsLoading { .batched(pageSize: pageSize, cachedPages: cachedPages) }

    struct Figures {
        var size: Int
        /// Batched controller init + the first page read.
        var openBatched: Samples
        /// Eager controller init.
        var openEager: Samples
        /// Plain GRDB fetchAll of the full records in the same order.
        var plain: Samples
        /// The same three, in CPU time of the calling thread (each runs on it).
        var openBatchedCPU = Samples()
        var openEagerCPU = Samples()
        var plainCPU = Samples()
        /// Resident bytes the batched and eager controllers hold after init (after malloc_trim).
        var heapBatched: Int?
        var heapEager: Int?
        /// Peak RSS growth while each controller was created (VmHWM).
        var peakBatched: Int?
        var peakEager: Int?
        var changes: [Change: Samples] = [:]
        var scrollAllBatched = Samples()
        var scrollAllEager = Samples()
        var randomBatched = Samples()
        var randomEager = Samples()
        var pagesAfterScroll = 0
    }

    /// Resident bytes after glibc returned the free memory it can to the system
    /// (`malloc_trim(0)`, looked up at run time: it is not in Swift's Glibc module), so that
    /// the difference of two readings is the memory held in between.
    static func heapInUse() -> Int? {
        #if canImport(Glibc)
        typealias Trim = @convention(c) (Int) -> CInt
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") {
            _ = unsafeBitCast(symbol, to: Trim.self)(0)
        }
        #endif
        return ProcessMemory.resident
    }

    static func run(size: Int, repetitions: Int) throws -> Figures {
        log("== batched loading, \(formatCount(size)) notes in \(NotesDatabase.notebookCount) notebooks")
        let database = try NotesDatabase(noteCount: size)
        defer { database.remove() }
        let store = database.store
        let deliveries = DispatchQueue(label: "strata.benchmarks.batched")

        // Memory first, before anything else of this size is allocated.
        func memory(_ loading: ResultsLoading) throws -> (heap: Int?, peak: Int?) {
            ProcessMemory.resetPeak()
            let heapBefore = heapInUse(), residentBefore = ProcessMemory.resident
            let controller = try ResultsController(
                store: store, request: Note.Fetches.byNotebook, loading: loading, deliveryQueue: deliveries)
            if case .batched = loading { _ = controller.snapshot[ItemPath(section: 0, item: 0)] }
            let heapAfter = heapInUse(), peak = ProcessMemory.peakResident
            withExtendedLifetime(controller) {}
            return (
                heapAfter.flatMap { after in heapBefore.map { after - $0 } },
                peak.flatMap { peak in residentBefore.map { peak - $0 } }
            )
        }
        let batchedMemory = try memory(loading)
        let eagerMemory = try memory(.eager)

        // Opening, alternately.
        var openBatched = Samples(), openEager = Samples(), plain = Samples()
        var openBatchedCPU = Samples(), openEagerCPU = Samples(), plainCPU = Samples()
        let warmUp = 1
        for round in 0..<(warmUp + repetitions) {
            var start = now(), cpu = threadCPUTime()
            let batched = try ResultsController(
                store: store, request: Note.Fetches.byNotebook, loading: loading, deliveryQueue: deliveries)
            _ = batched.snapshot[ItemPath(section: 0, item: 0)]
            let batchedTime = now() - start, batchedCPU = threadCPUTime() - cpu
            withExtendedLifetime(batched) {}
            start = now()
            cpu = threadCPUTime()
            let eager = try ResultsController(store: store, request: Note.Fetches.byNotebook, deliveryQueue: deliveries)
            let eagerTime = now() - start, eagerCPU = threadCPUTime() - cpu
            withExtendedLifetime(eager) {}
            start = now()
            cpu = threadCPUTime()
            let notes = try store.read { db in
                try Note.order(Column("pinned").desc, Column("title"), Column("id")).fetchAll(db)
            }
            let plainTime = now() - start, plainCPUTime = threadCPUTime() - cpu
            guard notes.count == size else { throw BenchmarkError.resultsDiffer("plain fetch found \(notes.count)") }
            if round >= warmUp {
                openBatched.nanoseconds.append(batchedTime)
                openEager.nanoseconds.append(eagerTime)
                plain.nanoseconds.append(plainTime)
                openBatchedCPU.nanoseconds.append(batchedCPU)
                openEagerCPU.nanoseconds.append(eagerCPU)
                plainCPU.nanoseconds.append(plainCPUTime)
            }
        }
        log("   open: batched \(formatMilliseconds(openBatched.medianMilliseconds)), eager \(formatMilliseconds(openEager.medianMilliseconds)), GRDB \(formatMilliseconds(plain.medianMilliseconds))")

        var figures = Figures(
            size: size, openBatched: openBatched, openEager: openEager, plain: plain,
            openBatchedCPU: openBatchedCPU, openEagerCPU: openEagerCPU, plainCPU: plainCPU,
            heapBatched: batchedMemory.heap, heapEager: eagerMemory.heap, peakBatched: batchedMemory.peak,
            peakEager: eagerMemory.peak)

        // Scrolling: every row in order, and 10,000 random rows, from a new snapshot each time.
        let eager = try ResultsController(store: store, request: Note.Fetches.byNotebook, deliveryQueue: deliveries)
        let eagerSnapshot = eager.snapshot
        var random = SplitMix64(seed: 7)
        let paths = (0..<10_000).map { _ -> ItemPath in
            let section = Int(random.next(upperBound: UInt64(eagerSnapshot.numberOfSections)))
            let count = eagerSnapshot.numberOfRows(inSection: section)
            return ItemPath(section: section, item: Int(random.next(upperBound: UInt64(count))))
        }
        for _ in 0..<max(3, repetitions / 2) {
            let batched = try ResultsController(
                store: store, request: Note.Fetches.byNotebook, loading: loading, deliveryQueue: deliveries)
            var snapshot = batched.snapshot
            var checksum = 0
            figures.scrollAllBatched.nanoseconds.append(timed {
                for section in snapshot.sections { for row in section.rows { checksum &+= row.item!.title.utf8.count } }
            })
            figures.scrollAllEager.nanoseconds.append(timed {
                for section in eagerSnapshot.sections { for row in section.rows { checksum &-= row.item!.title.utf8.count } }
            })
            guard checksum == 0 else { throw BenchmarkError.resultsDiffer("batched rows differ from eager rows") }
            try batched.resume()  // no-op: not paused
            snapshot = try ResultsController(
                store: store, request: Note.Fetches.byNotebook, loading: loading, deliveryQueue: deliveries).snapshot
            figures.randomBatched.nanoseconds.append(timed {
                for path in paths { checksum &+= snapshot[path].item!.title.utf8.count }
            })
            figures.randomEager.nanoseconds.append(timed {
                for path in paths { checksum &-= eagerSnapshot[path].item!.title.utf8.count }
            })
            guard checksum == 0 else { throw BenchmarkError.resultsDiffer("batched rows differ from eager rows") }
        }
        log("   scroll all: batched \(formatMilliseconds(figures.scrollAllBatched.medianMilliseconds)), eager \(formatMilliseconds(figures.scrollAllEager.medianMilliseconds)); 10k random: batched \(formatMilliseconds(figures.randomBatched.medianMilliseconds)), eager \(formatMilliseconds(figures.randomEager.medianMilliseconds))")
        withExtendedLifetime(eager) {}

        // A one-row change on a batched controller.
        let probe = LatencyProbe(store: store)
        let controller = try ResultsController(
            store: store, request: Note.Fetches.byNotebook, loading: loading, deliveryQueue: deliveries)
        let forwarder = BatchForwarder(probe: probe)
        controller.coordinate(forwarder)
        controller.waitForDeliveries()
        _ = controller.snapshot[ItemPath(section: 0, item: 0)]  // a list showing its first rows
        figures.changes = try ChangeDriver(database: database, probe: probe).run(warmUp: 5, repetitions: 51)
        log("   one-row change: \(Change.allCases.map { "\($0) \(formatMilliseconds(figures.changes[$0]!.medianMilliseconds))" }.joined(separator: ", "))")
        // The controller's final state equals an eager fetch.
        controller.waitForDeliveries()
        let check = try ResultsController(store: store, request: Note.Fetches.byNotebook, deliveryQueue: deliveries)
        guard controller.snapshot == check.snapshot else { throw BenchmarkError.resultsDiffer("batched state differs") }
        withExtendedLifetime(forwarder) {}
        return figures
    }

    static func report(_ all: [Figures]) {
        print("")
        print("Batched loading (`.batched(pageSize: \(pageSize), cachedPages: \(cachedPages))`), `Note.Fetches.byNotebook`")
        print("")
        print("Open: controller init and the first page read, against plain GRDB `fetchAll` of the full records in the same order")
        print("")
        print("| notes | batched | eager | plain GRDB fetchAll | runs | batched ÷ GRDB | eager ÷ GRDB |")
        print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for f in all {
            print(
                "| \(formatCount(f.size)) | \(formatMilliseconds(f.openBatched.medianMilliseconds)) "
                    + "| \(formatMilliseconds(f.openEager.medianMilliseconds)) | \(formatMilliseconds(f.plain.medianMilliseconds)) "
                    + "| \(f.plain.count) | \(formatRatio(f.openBatched.medianMilliseconds / f.plain.medianMilliseconds)) "
                    + "| \(formatRatio(f.openEager.medianMilliseconds / f.plain.medianMilliseconds)) |")
        }
        print("")
        print("The same, in CPU time of the calling thread (the opening and the plain fetch both run on it)")
        print("")
        print("| notes | batched | eager | plain GRDB fetchAll | batched ÷ GRDB | eager ÷ GRDB |")
        print("| ---: | ---: | ---: | ---: | ---: | ---: |")
        for f in all {
            print(
                "| \(formatCount(f.size)) | \(formatMilliseconds(f.openBatchedCPU.medianMilliseconds)) "
                    + "| \(formatMilliseconds(f.openEagerCPU.medianMilliseconds)) | \(formatMilliseconds(f.plainCPU.medianMilliseconds)) "
                    + "| \(formatRatio(f.openBatchedCPU.medianMilliseconds / f.plainCPU.medianMilliseconds)) "
                    + "| \(formatRatio(f.openEagerCPU.medianMilliseconds / f.plainCPU.medianMilliseconds)) |")
        }
        print("")
        print("Memory held after init (RSS growth, free memory returned by `malloc_trim(0)` before each reading), and the peak RSS growth during init (VmHWM)")
        print("")
        print("| notes | batched held | per row | eager held | per row | batched peak growth | eager peak growth |")
        print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for f in all {
            func perRow(_ bytes: Int?) -> String { bytes.map { "\($0 / f.size) B" } ?? "n/a" }
            print(
                "| \(formatCount(f.size)) | \(ProcessMemory.format(f.heapBatched)) | \(perRow(f.heapBatched)) "
                    + "| \(ProcessMemory.format(f.heapEager)) | \(perRow(f.heapEager)) "
                    + "| \(ProcessMemory.format(f.peakBatched)) | \(ProcessMemory.format(f.peakEager)) |")
        }
        print("")
        print("One-row change on a batched controller, commit → batch delivered")
        print("")
        print("| notes | change | batched | runs |")
        print("| ---: | --- | ---: | ---: |")
        for f in all {
            for change in Change.allCases {
                let s = f.changes[change]!
                print(
                    "| \(formatCount(f.size)) | \(change.rawValue) | \(formatMilliseconds(s.medianMilliseconds)) "
                        + "(\(formatMilliseconds(s.percentile(0.9)))) | \(s.count) |")
            }
        }
        print("")
        print("Reading rows: every row in order, and 10,000 random rows, from a new snapshot")
        print("")
        print("| notes | read | batched | eager snapshot | batched ÷ eager |")
        print("| ---: | --- | ---: | ---: | ---: |")
        for f in all {
            print(
                "| \(formatCount(f.size)) | every row | \(formatMilliseconds(f.scrollAllBatched.medianMilliseconds)) "
                    + "| \(formatMilliseconds(f.scrollAllEager.medianMilliseconds)) "
                    + "| \(formatRatio(f.scrollAllBatched.medianMilliseconds / f.scrollAllEager.medianMilliseconds)) |")
            print(
                "| \(formatCount(f.size)) | 10,000 random | \(formatMilliseconds(f.randomBatched.medianMilliseconds)) "
                    + "| \(formatMilliseconds(f.randomEager.medianMilliseconds)) "
                    + "| \(formatRatio(f.randomBatched.medianMilliseconds / f.randomEager.medianMilliseconds)) |")
        }
        print("")
        print("Aims")
        for f in all {
            let ratio = f.openBatched.medianMilliseconds / f.plain.medianMilliseconds
            let cpuRatio = f.openBatchedCPU.medianMilliseconds / f.plainCPU.medianMilliseconds
            print(
                "- \(formatCount(f.size)) open ≤ 0.5× GRDB: \(ratio <= 0.5 ? "met" : "MISSED") (\(formatRatio(ratio)); CPU time \(formatRatio(cpuRatio)))")
            if let heap = f.heapBatched {
                print("- \(formatCount(f.size)) ≤ 100 bytes per row: \(heap / f.size <= 100 ? "met" : "MISSED") (\(heap / f.size) B)")
            }
            let worst = Change.allCases.map { f.changes[$0]!.medianMilliseconds }.max()!
            print("- \(formatCount(f.size)) one-row change < 1 ms: \(worst < 1 ? "met" : "MISSED") (slowest median \(formatMilliseconds(worst)))")
        }
    }
}
