import Foundation
import GRDB
import Testing

@testable import Strata

/// The pages of batched snapshots on their own (``PageLoader`` and ``BatchedPages``), driven
/// the way the engine drives them — a commit is written, then either kept for the live
/// snapshots (`commit(changed:wasShown:)`, then `left(_:)` with the items it took out of the
/// results) or answered by a refetch (`detach()`), and snapshots are made, read and dropped
/// in any order — against a plain reference: for every live snapshot, the ids it shows and
/// the values the store held when it was made. Items leave the results and come back through
/// their own rows, and through related rows (their own rows unchanged, as when a notebook is
/// renamed under a predicate through it), and may change or go after they left.
///
/// After every step the loader's and every live snapshot's invariants are checked (cache
/// bound, each id cached once, values kept only for changed ids, parents older). Reads must
/// return the snapshot's own value, however many commits and refetches came after it and
/// whether or not its page was read before them; two snapshots must report every id whose
/// value differs between them as one that may differ, and their rows compare equal exactly
/// when the reference's do. Seeded; the seed is printed and in every failure.
@Suite("Batched pages, alone")
struct BatchedPagesTests {
    /// A live snapshot and what the reference says it shows.
    struct Live {
        let pages: BatchedPages<Note>
        let ids: [Int64]
        let values: [Int64: Note]
    }

    @Test("random commits, refetches, snapshots and reads: every snapshot reads its own values", arguments: [
        (1, 1), (2, 2), (3, 3),
    ])
    func randomOperations(_ sizes: (pageSize: Int, cachedPages: Int)) throws {
        let seed = partTestSeed("BatchedPagesTests.randomOperations(\(sizes.pageSize), \(sizes.cachedPages))")
        var random = SeededGenerator(seed: seed)
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        let store = try Store(schema: NotesModel.schema, path: path)
        defer { try? store.close() }
        var counter = 0
        func note(_ id: Note.ID = .unsaved) -> Note {
            counter += 1
            return Note(id: id, title: "t\(counter)", updatedAt: day)
        }
        try store.write { db in for _ in 0..<12 { _ = try db.insert(note()) } }
        /// The reference of the store's state: every item's value.
        func state() throws -> [Int64: Note] {
            Dictionary(uniqueKeysWithValues: try store.fetchAll(Note.self).map { ($0.id.rawValue, $0) })
        }
        var current = try state()
        /// The items the results show (the rest are hidden: a predicate rejects them). An
        /// item joins or leaves them when its own row changes, or a related row.
        var shown = Set(current.keys)
        let loader = try PageLoader<Note>(store: store, path: path, pageSize: sizes.pageSize, cachedPages: sizes.cachedPages)
        var live: [Live] = []
        func makeSnapshot() {
            let ids = shown.sorted().shuffled(using: &random)
            live.append(Live(pages: loader.makePages(), ids: ids, values: current))
        }
        makeSnapshot()
        var seen = (reads: 0, kept: 0, refetches: 0, compared: 0, related: 0, keptAfterLeaving: 0)

        for step in 0..<400 {
            let context = "seed \(seed), step \(step)"
            switch Int.random(in: 0..<23, using: &random) {
            case 0..<6:
                // A commit: some items updated, some deleted, some inserted.
                let before = shown
                var changed = Set<Int64>()
                try store.write { db in
                    for id in current.keys.shuffled(using: &random).prefix(Int.random(in: 0...3, using: &random)) {
                        changed.insert(id)
                        if Int.random(in: 0..<4, using: &random) == 0 {
                            _ = try db.delete(Note.self, id: Note.ID(id))
                        } else {
                            _ = try db.update(note(Note.ID(id)))
                        }
                    }
                    for _ in 0..<Int.random(in: 0...2, using: &random) {
                        changed.insert(try db.insert(note()).id.rawValue)
                    }
                }
                current = try state()
                for id in changed {
                    if current[id] != nil && Int.random(in: 0..<5, using: &random) > 0 { shown.insert(id) } else { shown.remove(id) }
                }
                if Int.random(in: 0..<6, using: &random) == 0 {
                    // Too large to patch: a refetch; what changed is not traced.
                    try loader.detach()
                    seen.refetches += 1
                } else {
                    try loader.commit(changed: changed, wasShown: { before.contains($0) })
                    loader.left(before.subtracting(shown))
                }
                if Bool.random(using: &random) { makeSnapshot() }
            case 20..<23:
                // A commit that writes only a related row (a notebook renamed): items leave
                // the results or come back with their own rows unchanged, so it keeps no
                // value; a later commit may change or delete those that left.
                let before = shown
                try store.write { db in
                    var notebook = Notebook(name: "b\(step)", createdAt: day)
                    try notebook.insert(db)
                }
                for id in current.keys.shuffled(using: &random).prefix(Int.random(in: 1...4, using: &random)) {
                    if shown.remove(id) == nil { shown.insert(id) }
                }
                try loader.commit(changed: [], wasShown: { before.contains($0) })
                loader.left(before.subtracting(shown))
                seen.related += 1
                if Bool.random(using: &random) { makeSnapshot() }
            case 6..<8:
                makeSnapshot()
            case 8:
                // A snapshot no one holds any more.
                if live.count > 1 { live.remove(at: Int.random(in: 0..<live.count, using: &random)) }
            case 9..<16:
                // A row of a snapshot, read now.
                guard let snapshot = live.randomElement(using: &random), !snapshot.ids.isEmpty else { continue }
                let position = Int.random(in: 0..<snapshot.ids.count, using: &random)
                let id = snapshot.ids[position]
                // With its page (cached), or alone (as a user's move reads the moved row).
                let loadingPage = Bool.random(using: &random)
                let value = try snapshot.pages.item(at: position, of: RowChunks(snapshot.ids), loadingPage: loadingPage)
                #expect(value == snapshot.values[id], "\(context): item \(id) of snapshot \(snapshot.pages.version), page \(loadingPage)")
                seen.reads += 1
                if snapshot.values[id] != current[id] {
                    seen.kept += 1
                    if !shown.contains(id) { seen.keptAfterLeaving += 1 }
                }
            case 16..<18:
                // Two snapshots: every id whose value differs may differ, and their rows
                // are equal exactly when the reference's are.
                guard let a = live.randomElement(using: &random), let b = live.randomElement(using: &random) else { continue }
                let changed = a.pages.changedIDs(between: b.pages)
                for id in Set(a.ids).intersection(b.ids) where a.values[id] != b.values[id] {
                    #expect(changed?.contains(id) ?? true, "\(context): \(id) differs but is not reported")
                    #expect(a.pages.valueMayDiffer(id, in: b.pages), "\(context): \(id) differs but may not")
                }
                // (A snapshot answers only for the ids it shows: the rows both show.)
                let inB = Set(b.ids)
                let common = a.ids.filter { inB.contains($0) }
                let rowsA = ResultsRows(ids: RowChunks(common), pages: a.pages), rowsB = ResultsRows(ids: RowChunks(common), pages: b.pages)
                let equal = common.allSatisfy { a.values[$0] == b.values[$0] }
                #expect((rowsA == rowsB) == equal, "\(context): rows of \(a.pages.version) and \(b.pages.version)")
                seen.compared += 1
            default:
                // Every row of a snapshot.
                guard let snapshot = live.randomElement(using: &random) else { continue }
                for (position, id) in snapshot.ids.enumerated() {
                    let value = try snapshot.pages.item(at: position, of: RowChunks(snapshot.ids), loadingPage: true)
                    #expect(value == snapshot.values[id], "\(context): item \(id) of snapshot \(snapshot.pages.version), read in full")
                }
            }
            loader._checkInvariants()
            for snapshot in live { snapshot.pages._checkInvariants() }
        }
        #expect(
            seen.reads > 50 && seen.kept > 0 && seen.refetches > 0 && seen.compared > 0 && seen.related > 0
                && seen.keptAfterLeaving > 0, "seed \(seed): \(seen)")
    }
}
