import Foundation
import GRDB
import Testing

@testable import Strata

/// The snapshot journal on its own, driven the way ``ResultsEngine`` drives it — fetches,
/// commits patched row by row or replaced in bulk, several commits between two snapshots,
/// post-fetch options set and cleared, sections derived again — over a keyed index (sections
/// by `k`, items by `s` then id), the journal holding every value, with random seeded
/// operations. The
/// reference is plain: a dictionary of each item's keys and value, from which every snapshot
/// is derived by grouping, sorting, filtering and a stable sort.
///
/// After every step the journal's invariants are checked against the index (with the
/// index's own), and that it holds every indexed item's value once. After every snapshot it must equal the reference's, and
/// what the journal says changed must be true: with journaled rows, the batch built from
/// them replays the previous snapshot into the new one (a changed row the journal missed
/// would keep its old value or place); with changed sections, every other section kept
/// its rows. The seed is printed and in every failure.
@Suite("Snapshot journal, alone")
struct SnapshotJournalTests {
    typealias Snapshot = ResultsSnapshot<Note, Int>

    struct Model {
        var index = SectionedIndex<Int, FullIndexKeys>(kind: .key(path: ["k"], descending: false, firstLetter: false), itemDescending: [false])
        var journal = SnapshotJournal<Note, Int>(options: ResultsOptions())
        /// The reference: each item's section key, sort key and value.
        var rows: [Int64: (k: Int64, s: Int64, item: Note)] = [:]
        var last: Snapshot?
        /// How many snapshots reported each kind of change, and how many bulk commits were
        /// journaled: the test must reach every path.
        var seen: [String: Int] = [:]

        static func keys(_ k: Int64, _ s: Int64) -> IndexKeys {
            IndexKeys(sort: [s.databaseValue], key: k.databaseValue, keyOrder: k.databaseValue)
        }

        /// A fetch, as ``EagerLoading`` makes one: rows in SQL order, each section's item rows
        /// set. `keepingState`: a commit's refetch, which keeps the last snapshot's ids and
        /// values (``SnapshotJournal/beginRefetch(_:)``) to compare by id.
        /// `comparingAhead`: once every row is read, the values are handed to the journal to
        /// compare on another thread (``SnapshotJournal/compareRefetched(with:)``), as
        /// ``EagerLoading`` does; else the batch compares them. `matchingAhead` (with
        /// `comparingAhead`): the rows are matched by id on that thread too
        /// (``SnapshotJournal/matchRefetched(_:)``), as ``EagerLoading`` does.
        mutating func fetch(keepingState: Bool = false, comparingAhead: Bool = false, matchingAhead: Bool = false) {
            if keepingState {
                journal.beginRefetch(index)
            } else {
                journal.reset()
            }
            var builder = index.beginBuild(sectionObjects: [])
            var buckets: [RowChunks<ResultsRow<Note>>] = []
            for (id, row) in rows.sorted(by: { ($0.value.k, $0.value.s, $0.key) < ($1.value.k, $1.value.s, $1.key) }) {
                guard let bucket = index.appendFetched(id, Self.keys(row.k, row.s), to: &builder) else { continue }
                if bucket == buckets.count { buckets.append(RowChunks()) }
                buckets[bucket].append(.item(row.item))
            }
            for (section, bucket) in index.finishBuild(builder) {
                journal.setRows(buckets[bucket], for: section)
            }
            if comparingAhead {
                var read = ItemPayload<Note>()
                for (id, row) in rows.sorted(by: { $0.key < $1.key }) { read.append(id, row.item) }
                journal.compareRefetched(with: read)
                if matchingAhead { journal.matchRefetched(index) }
            }
        }

        /// A commit that deleted `deleted` and re-read `fetched` (changed or new), as
        /// ``EagerLoading`` applies one: patched row by row, or in bulk.
        mutating func commit(deleted: Set<Int64>, fetched: [(id: Int64, k: Int64, s: Int64, item: Note)], bulk: Bool) throws {
            for id in deleted { rows[id] = nil }
            for row in fetched { rows[row.id] = (row.k, row.s, row.item) }
            let gone = deleted.union(fetched.map(\.id))
            journal.beginCommit()
            for id in gone { journal.forgetUnplaced(id) }
            guard var journaled = journal.takeRowJournal() else {
                for id in gone { try remove(id) }
                for row in fetched { try insert(row.id, row.item, Self.keys(row.k, row.s)) }
                return
            }
            if bulk {
                let refetched = Set(fetched.map(\.id))
                let replaced = try index.replaceInBulk(
                    gone: gone, fetched: fetched.map { ($0.id, Self.keys($0.k, $0.s)) }, refetched: refetched, parallelMinimum: 8)
                let sections = index.sections
                journal.replaced(
                    in: replaced.touched, removals: replaced.removedIndexes, arrivals: replaced.arrivals,
                    items: { fetched[$0].item }, sectionItems: { sections[$0]?.items }
                ) { id in fetched.first { $0.id == id }?.item }
                for (id, place) in replaced.old { journaled[id] = RowChange(old: place) }
                for (id, place) in replaced.new { journaled[id, default: RowChange()].new = place }
                journal.putRowJournal(journaled)
                seen["bulk", default: 0] += 1
                return
            }
            for id in gone {
                if let place = try index.place(of: id) { journaled[id] = RowChange(old: place) }
            }
            for id in gone { try remove(id) }
            for row in fetched { try insert(row.id, row.item, Self.keys(row.k, row.s)) }
            for row in fetched {
                if let place = try index.place(of: row.id) { journaled[row.id, default: RowChange()].new = place }
            }
            journal.putRowJournal(journaled)
        }

        private mutating func remove(_ id: Int64) throws {
            guard let removal = try index.remove(id) else { return }
            journal.removed(id, at: removal.index, from: removal.section)
            if removal.sectionRemoved { journal.invalidate([removal.section]) }
        }

        private mutating func insert(_ id: Int64, _ item: Note, _ keys: IndexKeys) throws {
            guard let place = try index.insert(id, keys) else { return }
            journal.inserted(id, item, at: place.index, in: place.section)
        }

        /// The snapshot the reference shows: sections by key, items by sort key then id,
        /// the options applied plainly.
        func expected() -> [(id: SectionID, rows: [ResultsRow<Note>])] {
            let options = journal.options
            var result: [(id: SectionID, rows: [ResultsRow<Note>])] = []
            for (k, members) in Dictionary(grouping: rows, by: \.value.k).sorted(by: { $0.key < $1.key }) {
                let items = members.sorted { ($0.value.s, $0.key) < ($1.value.s, $1.key) }.map(\.value.item)
                var shown = items.filter { options.filter?($0) ?? true }
                let rejected = items.filter { !(options.filter?($0) ?? true) }
                if let comparator = options.comparator {
                    shown = shown.enumerated().sorted { a, b in
                        comparator(a.element, b.element) || (!comparator(b.element, a.element) && a.offset < b.offset)
                    }.map(\.element)
                }
                var sectionRows = shown.map { ResultsRow.item($0) }
                if options.groupFilteredItems && !rejected.isEmpty { sectionRows.append(.group(rejected)) }
                if !sectionRows.isEmpty { result.append((.key(k.databaseValue), sectionRows)) }
            }
            return result
        }

        /// Takes the next snapshot and checks it, and what the journal says changed.
        mutating func snapshot(_ context: String) {
            let (new, changes) = journal.snapshotAndChanges(index)
            let actual = new.sections.map { (id: $0.id, rows: $0.rows.array) }
            let expected = expected()
            let same = actual.count == expected.count && zip(actual, expected).allSatisfy { $0.id == $1.id && $0.rows == $1.rows }
            #expect(same, "\(context): journal \(render(actual)) vs reference \(render(expected))")
            defer { last = new }
            guard let old = last else { return }
            switch changes {
            case .rows(let journaled):
                seen[journaled.isEmpty ? "no rows" : "rows", default: 0] += 1
                let batch = ChangeBatch(from: old, to: new, rowChanges: journaled)
                let replayed = try? batch.apply(to: old, reading: new)
                #expect(replayed == new, "\(context): the journaled rows \(journaled.count) miss a change (batch \(batch))")
            case .sections(let changed):
                seen["sections", default: 0] += 1
                let before = Dictionary(uniqueKeysWithValues: old.sections.map { ($0.id, $0.rows) })
                for section in new.sections where !changed.contains(section.id) {
                    guard let rows = before[section.id] else { continue }
                    let same = rows == section.rows
                    #expect(same, "\(context): section \(section.id) changed but is not reported")
                }
            case .all:
                seen["all", default: 0] += 1
            case .refetched(let kept):
                seen["refetched", default: 0] += 1
                let batch = BatchBuilder.batch(from: old, to: new, known: .refetched(kept))
                #expect(batch == ChangeBatch(from: old, to: new), "\(context): the difference by the ids kept")
                if let ahead = kept.matchedAhead, ahead.matchesRows {
                    // Matched for the sections the snapshots show, so the batch took that matching.
                    seen["matched ahead", default: 0] += 1
                    let rows = ahead.rowMatching(
                        old: old.sections.map(\.id), new: new.sections.map(\.id))
                    #expect(rows != nil, "\(context): rows matched ahead for other sections")
                }
            }
        }

        func check() {
            index._checkInvariants()
            journal._checkInvariants(against: index)
            journal._checkValues(against: index)
        }

        private func render(_ sections: [(id: SectionID, rows: [ResultsRow<Note>])]) -> String {
            sections.map { section in
                "\(section.id)[" + section.rows.map { row in
                    switch row {
                    case .item(let note): note.title
                    case .group(let notes): "{" + notes.map(\.title).joined(separator: " ") + "}"
                    }
                }.joined(separator: " ") + "]"
            }.joined(separator: " ")
        }
    }

    static func randomOptions(_ random: inout SeededGenerator) -> ResultsOptions<Note> {
        var options = ResultsOptions<Note>()
        if Int.random(in: 0..<3, using: &random) == 0 { options.filter = { !$0.pinned } }
        // Few distinct bodies: ties, which the stable sort keeps in fetch order.
        if Int.random(in: 0..<3, using: &random) == 0 { options.comparator = { $0.body > $1.body } }
        options.groupFilteredItems = Bool.random(using: &random)
        return options
    }

    @Test("random fetches, commits and options: snapshots and reported changes match the reference", arguments: [0, 1, 2])
    func randomOperations(_ run: Int) throws {
        let seed = partTestSeed("SnapshotJournalTests.randomOperations(\(run))")
        var random = SeededGenerator(seed: seed)
        var model = Model()
        var nextID: Int64 = 1
        var version = 0
        func note(_ id: Int64) -> Note {
            version += 1
            return Note(
                id: Note.ID(id), title: "n\(id).\(version)", body: ["a", "b", "c"].randomElement(using: &random)!,
                pinned: Int.random(in: 0..<4, using: &random) == 0, updatedAt: day)
        }
        for _ in 0..<Int.random(in: 0...30, using: &random) {
            model.rows[nextID] = (Int64.random(in: 0..<4, using: &random), Int64.random(in: 0..<5, using: &random), note(nextID))
            nextID += 1
        }
        model.fetch()
        model.check()
        for step in 0..<600 {
            let context = "seed \(seed), step \(step)"
            switch Int.random(in: 0..<20, using: &random) {
            case 0:
                // A refetch, plain or a commit's (some rows written first, without a journal).
                let commit = Bool.random(using: &random)
                if commit {
                    for id in model.rows.keys.shuffled(using: &random).prefix(Int.random(in: 0...6, using: &random)) {
                        if Bool.random(using: &random) { model.rows[id]!.item = note(id) }
                        if Bool.random(using: &random) { model.rows[id]!.s = Int64.random(in: 0..<5, using: &random) }
                        if Int.random(in: 0..<3, using: &random) == 0 { model.rows[id]!.k = Int64.random(in: 0..<4, using: &random) }
                    }
                }
                let ahead = commit && Bool.random(using: &random)
                model.fetch(keepingState: commit, comparingAhead: ahead, matchingAhead: ahead && Bool.random(using: &random))
            case 1..<10:
                // A commit: some rows deleted, some changed (keys and values), some new.
                let existing = model.rows.keys.shuffled(using: &random)
                let large = Int.random(in: 0..<4, using: &random) == 0
                let deleted = Set(existing.prefix(Int.random(in: 0...(large ? 8 : 2), using: &random)))
                var fetched: [(id: Int64, k: Int64, s: Int64, item: Note)] = []
                for id in existing.dropFirst(deleted.count).prefix(Int.random(in: 0...(large ? 10 : 3), using: &random)) {
                    fetched.append((id, Int64.random(in: 0..<4, using: &random), Int64.random(in: 0..<5, using: &random), note(id)))
                }
                for _ in 0..<Int.random(in: 0...(large ? 6 : 2), using: &random) {
                    fetched.append((nextID, Int64.random(in: 0..<4, using: &random), Int64.random(in: 0..<5, using: &random), note(nextID)))
                    nextID += 1
                }
                try model.commit(deleted: deleted, fetched: fetched, bulk: large)
            case 10:
                model.journal.options = Self.randomOptions(&random)
            case 11:
                // A section object changed: its rows are derived again.
                if let section = model.index.sections.keys.randomElement(using: &random) { model.journal.invalidate([section]) }
            default:
                model.snapshot(context)
            }
            model.check()
        }
        model.snapshot("seed \(seed), last")
        // A commit's refetch right after a snapshot of rows that are items, which the random
        // steps reach in most runs, not all: changed rows, then the refetch keeping the state,
        // its values compared by the batch, then ahead.
        for (ahead, matched) in [(false, false), (true, false), (true, true)] {
            model.journal.options = ResultsOptions()
            model.snapshot("seed \(seed), without options")
            for id in model.rows.keys.sorted().prefix(3) { model.rows[id]!.item = note(id) }
            model.fetch(keepingState: true, comparingAhead: ahead, matchingAhead: matched)
            model.check()
            model.snapshot("seed \(seed), after a commit's refetch (compared ahead: \(ahead), matched ahead: \(matched))")
        }
        for path in ["rows", "sections", "all", "refetched", "bulk", "matched ahead"] {
            #expect(model.seen[path, default: 0] > 0, "seed \(seed): no \(path) (\(model.seen))")
        }
    }
}
