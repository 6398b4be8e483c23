import Dispatch
import Foundation
import GRDB
import Strata

/// Commits that change many rows at once, and the controller's fallback path (a refetch or
/// a derivation of every section, then the identity difference), timed on a live
/// controller against the refetch + diff baseline in the same run.
///
/// - *k changed rows*: one transaction gives k random notes a new random title, so that
///   each moves inside its section; timed from the commit to the batch's delivery.
/// - *Large commits*: one transaction that deletes 10% of the notes, inserts as many new
///   ones into random notebooks and gives 2% new titles (1%) or notebooks (1%); and one
///   that gives 30% of the notes new titles, above the controller's refetch threshold.
/// - *Options*: a post-fetch filter (about half the notes) set and removed, and a
///   comparator (titles in reverse) set and removed, timed from the property's setter to
///   the batch's delivery.
/// - *Resume*: `pause()`, the large commit above, then `resume()` until its reload is
///   delivered.
struct LargeCommitsBenchmark {
    struct Figures {
        var label: String
        var changedRows: Int
        var ours: Samples
        var baseline: Samples?
    }

    let database: NotesDatabase
    let probe: LatencyProbe
    let controller: ResultsController<Note, Notebook>
    let deliveries: DispatchQueue
    var random = SplitMix64(seed: 99)

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
    mutating func perform(_ commit: Commit) throws -> Int {
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

    /// `warmUp` + `repetitions` commits, each timed from the commit to its batch.
    mutating func timeCommits(_ commit: Commit, warmUp: Int, repetitions: Int) throws -> (Samples, changed: Int) {
        var samples = Samples()
        var changed = 0
        for round in 0..<(warmUp + repetitions) {
            changed = try perform(commit)
            let (nanoseconds, batch) = probe.waitForBatch()
            try check(batch, changed: changed, commit: commit)
            if round >= warmUp { samples.nanoseconds.append(nanoseconds) }
        }
        return (samples, changed)
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

    // MARK: - Scenarios

    /// The k-commit table: Strata for every k, then the baseline for every k.
    mutating func kCommits(_ ks: [Int]) throws -> [Figures] {
        func runs(_ k: Int) -> (Int, Int) { k <= 1_000 ? (3, 15) : k <= 10_000 ? (2, 9) : (1, 7) }
        var ours: [Int: Samples] = [:]
        for k in ks {
            let (warmUp, repetitions) = runs(k)
            ours[k] = try timeCommits(.retitle(k), warmUp: warmUp, repetitions: repetitions).0
            log("   \(formatCount(k)) retitled: Strata \(formatMilliseconds(ours[k]!.medianMilliseconds))")
        }
        var base: [Int: Samples] = [:]
        try withBaseline {
            for k in ks {
                base[k] = try timeCommits(.retitle(k), warmUp: 1, repetitions: 7).0
                log("   \(formatCount(k)) retitled: baseline \(formatMilliseconds(base[k]!.medianMilliseconds))")
            }
        }
        return ks.map { Figures(label: "\(formatCount($0)) retitled", changedRows: $0, ours: ours[$0]!, baseline: base[$0]!) }
    }

    /// Large commits, option toggles and resume.
    mutating func fallback() throws -> [Figures] {
        let size = controller.snapshot.rowCounts.reduce(0, +)
        let large: [(String, Commit)] = [
            ("10% deleted, 10% inserted, 2% moved", Commit.issueShape),
            ("30% retitled", .retitle(size * 3 / 10)),
        ]
        var figures: [Figures] = []
        var ours: [(Samples, Int)] = []
        for (label, commit) in large {
            ours.append(try timeCommits(commit, warmUp: 1, repetitions: 7))
            log("   \(label): Strata \(formatMilliseconds(ours.last!.0.medianMilliseconds))")
        }
        var base: [Samples] = []
        try withBaseline {
            for (label, commit) in large {
                base.append(try timeCommits(commit, warmUp: 1, repetitions: 7).0)
                log("   \(label): baseline \(formatMilliseconds(base.last!.medianMilliseconds))")
            }
        }
        for (i, (label, _)) in large.enumerated() {
            figures.append(Figures(label: label, changedRows: ours[i].1, ours: ours[i].0, baseline: base[i]))
        }

        // Options: set and removed, each timed to its batch.
        let filter: @Sendable (Note) -> Bool = { note in note.title.utf8.last.map { $0 & 1 == 0 } ?? true }
        let comparator: @Sendable (Note, Note) -> Bool = { $0.title > $1.title }
        var filterOn = Samples(), filterOff = Samples(), sortOn = Samples(), sortOff = Samples()
        var changed = (filter: 0, sort: 0)
        for round in 0..<(1 + 7) {
            func toggle(_ set: () -> Void) -> (UInt64, ChangeBatch) {
                let start = now()
                set()
                let batch = probe.waitForBatch().batch
                return (now() - start, batch)
            }
            let on = toggle { controller.filter = filter }
            let off = toggle { controller.filter = nil }
            let sorted = toggle { controller.comparator = comparator }
            let unsorted = toggle { controller.comparator = nil }
            changed = (on.1.itemDeletes.count, sorted.1.itemMoves.count)
            guard on.1.itemDeletes.count == off.1.itemInserts.count, on.1.itemDeletes.count > 0,
                sorted.1.itemMoves.count > 0
            else { throw BenchmarkError.unexpectedBatch("option toggles: \(on.1.itemDeletes.count) filtered") }
            if round >= 1 {
                filterOn.nanoseconds.append(on.0)
                filterOff.nanoseconds.append(off.0)
                sortOn.nanoseconds.append(sorted.0)
                sortOff.nanoseconds.append(unsorted.0)
            }
        }
        figures += [
            Figures(label: "filter set (hides about half)", changedRows: changed.filter, ours: filterOn),
            Figures(label: "filter removed", changedRows: changed.filter, ours: filterOff),
            Figures(label: "comparator set (titles reversed)", changedRows: changed.sort, ours: sortOn),
            Figures(label: "comparator removed", changedRows: changed.sort, ours: sortOff),
        ]
        log("   options: filter \(formatMilliseconds(filterOn.medianMilliseconds)) / \(formatMilliseconds(filterOff.medianMilliseconds)), "
            + "comparator \(formatMilliseconds(sortOn.medianMilliseconds)) / \(formatMilliseconds(sortOff.medianMilliseconds))")

        // Resume after a large commit: a refetch and a reload.
        var resume = Samples(), refetch = Samples()
        var resumeChanged = 0
        for round in 0..<(1 + 7) {
            controller.pause()
            resumeChanged = try perform(Commit.issueShape)
            let start = now()
            try controller.resume()
            controller.waitForDeliveries()
            let elapsed = now() - start
            let refetchStart = now()
            let fetched = try database.store.read { db in try RefetchBaseline.fetch(db) }
            let refetchElapsed = now() - refetchStart
            guard fetched == controller.snapshot else { throw BenchmarkError.resultsDiffer("after resume()") }
            if round >= 1 {
                resume.nanoseconds.append(elapsed)
                refetch.nanoseconds.append(refetchElapsed)
            }
        }
        log("   resume: \(formatMilliseconds(resume.medianMilliseconds)) (plain GRDB refetch \(formatMilliseconds(refetch.medianMilliseconds)))")
        figures.append(Figures(label: "resume() after the large commit", changedRows: resumeChanged, ours: resume, baseline: refetch))
        return figures
    }

    /// Runs `body` with the controller paused and the baseline observing commits instead;
    /// then checks that the resumed controller agrees with the baseline.
    private func withBaseline(_ body: () throws -> Void) throws {
        controller.pause()
        let forward = probe
        let baseline = try RefetchBaseline(store: database.store, deliveryQueue: deliveries) { forward.batchDidArrive($0) }
        try body()
        baseline.cancel()
        deliveries.sync {}
        try controller.resume()
        controller.waitForDeliveries()
        guard controller.snapshot == baseline.snapshot else {
            throw BenchmarkError.resultsDiffer("snapshots differ after the large commits")
        }
    }
}
