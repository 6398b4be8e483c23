import Benchmark
import Foundation
import Strata

/// The identity difference at `rows`: `IdentityDifference.Sectioned.Strata` beside
/// `IdentityDifference.Sectioned.Stdlib`, and Strata alone with generic ids
/// (`IdentityDifference.SectionedUUID.Strata`) and on one section (`IdentityDifference.Flat.Strata`).
func registerIdentityDifference(rows: Int) {
    let sectioned = IdentityDifferenceBenchmark.Shape(rows: rows, sections: 50)
    let flat = IdentityDifferenceBenchmark.Shape(rows: rows, sections: 1)
    registerStrataDifference("Sectioned", sectioned, makeItem: IdentityDifferenceBenchmark.note)
    registerStrataDifference("SectionedUUID", sectioned, makeItem: IdentityDifferenceBenchmark.uuidItem)
    registerStrataDifference("Flat", flat, makeItem: IdentityDifferenceBenchmark.note)

    // The standard library's Myers difference on the same rows flattened into arrays of ids
    // (flattened outside the timed region): seconds per run at 100k.
    let ids = Fixture<(old: [Note.ID], new: [Note.ID])>()
    let removals = count("removals"), insertions = count("insertions"), moves = count("moves")
    Benchmark(
        "IdentityDifference.Sectioned.Stdlib",
        configuration: .with(
            [.wallClock, .mallocCountTotal, removals, insertions, moves], Runs(warmUp: 0, measured: 3),
            setup: {
                let (old, new) = IdentityDifferenceBenchmark.snapshots(sectioned, seed: 2026, makeItem: IdentityDifferenceBenchmark.note)
                ids.set((
                    old.sections.flatMap { $0.rows.compactMap { $0.item?.objectID } },
                    new.sections.flatMap { $0.rows.compactMap { $0.item?.objectID } }
                ))
            },
            teardown: { ids.set(nil) })
    ) { benchmark in
        let (oldIDs, newIDs) = ids.value
        benchmark.startMeasurement()
        let difference = newIDs.difference(from: oldIDs).inferringMoves()
        benchmark.stopMeasurement()
        guard oldIDs.applying(difference) == newIDs else {
            throw BenchmarkError.resultsDiffer("the standard library's difference does not apply")
        }
        let moved = difference.insertions.count { change in
            if case .insert(_, _, let associated) = change { return associated != nil }
            return false
        }
        benchmark.measurement(removals, difference.removals.count)
        benchmark.measurement(insertions, difference.insertions.count)
        benchmark.measurement(moves, moved)
    }
}

/// `ChangeBatch(from:to:)` on two snapshots of `shape` built in setup; every batch is checked
/// by replaying it on the old snapshot, outside the timed region.
private func registerStrataDifference<Item: ResultsItem>(
    _ name: String, _ shape: IdentityDifferenceBenchmark.Shape, makeItem: @escaping (Int64, inout SplitMix64) -> Item
) where Item.ID: Sendable {
    let snapshots = Fixture<(old: ResultsSnapshot<Item, Notebook>, new: ResultsSnapshot<Item, Notebook>)>()
    let deletes = count("deletes"), inserts = count("inserts"), moves = count("moves")
    Benchmark(
        "IdentityDifference.\(name).Strata",
        configuration: .with(
            [.wallClock, .mallocCountTotal, deletes, inserts, moves], Runs(warmUp: 3, measured: 21),
            setup: { snapshots.set(IdentityDifferenceBenchmark.snapshots(shape, seed: 2026, makeItem: makeItem)) },
            teardown: { snapshots.set(nil) })
    ) { benchmark in
        let (old, new) = snapshots.value
        benchmark.startMeasurement()
        let batch = ChangeBatch(from: old, to: new)
        benchmark.stopMeasurement()
        guard try batch.apply(to: old, reading: new) == new else {
            throw BenchmarkError.resultsDiffer("the identity batch does not replay")
        }
        benchmark.measurement(deletes, batch.itemDeletes.count)
        benchmark.measurement(inserts, batch.itemInserts.count)
        benchmark.measurement(moves, batch.itemMoves.count)
    }
}

/// The identity difference of two snapshots, on its own: Strata's `ChangeBatch(from:to:)`
/// beside the standard library's `CollectionDifference` (`difference(from:)` then
/// `inferringMoves()`) on the same rows flattened into arrays of ids.
///
/// Two snapshots are built in memory (no store), with a fixed seed: N notes spread at random
/// over S notebook sections, then a new snapshot where 10% of the rows are deleted, 10% new
/// rows are inserted at random places, and 2% of the rows move (half to another place in
/// their section, half to a random place in another section). Every batch is checked by
/// replaying it on the old snapshot, outside the timed region.
enum IdentityDifferenceBenchmark {
    struct Shape: CustomStringConvertible {
        var rows: Int
        var sections: Int
        var deleted = 0.10
        var inserted = 0.10
        var moved = 0.02

        var description: String {
            "\(formatCount(rows)) rows in \(sections) section\(sections == 1 ? "" : "s"), "
                + "\(Int(deleted * 100))% deleted, \(Int(inserted * 100))% inserted, \(Int(moved * 100))% moved"
        }
    }

    // MARK: - Data

    /// A note with a random title, in notebook `section`.
    static func note(_ id: Int64, _ random: inout SplitMix64) -> Note {
        Note(
            id: Note.ID(id), title: NotesDatabase.title(&random), pinned: random.next(upperBound: UInt64(20)) == 0,
            updatedAt: Date(timeIntervalSince1970: 1_780_000_000))
    }

    /// An item identified by a UUID: `ChangeBatch(from:to:)`'s generic path.
    static func uuidItem(_ id: Int64, _ random: inout SplitMix64) -> UUIDItem {
        let high = random.next(), low = random.next()
        let bytes = withUnsafeBytes(of: (high, low)) { Array($0) }
        let uuid = UUID(uuid: (
            bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
            bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
        return UUIDItem(id: uuid, title: NotesDatabase.title(&random))
    }

    /// The two snapshots of `shape`, the same for the same seed.
    static func snapshots<Item: ResultsItem>(
        _ shape: Shape, seed: UInt64, makeItem: (Int64, inout SplitMix64) -> Item
    ) -> (old: ResultsSnapshot<Item, Notebook>, new: ResultsSnapshot<Item, Notebook>) where Item.ID: Sendable {
        var random = SplitMix64(seed: seed)
        func below(_ bound: Int) -> Int { Int(random.next(upperBound: UInt64(bound))) }
        let notebooks = (0..<shape.sections).map { index in
            Notebook(
                id: Notebook.ID(Int64(index + 1)), name: String(format: "Notebook %02d", index),
                createdAt: Date(timeIntervalSince1970: 1_780_000_000), position: index)
        }
        var rows: [[Item]] = Array(repeating: [], count: shape.sections)
        for id in 1...Int64(shape.rows) { rows[below(shape.sections)].append(makeItem(id, &random)) }
        func snapshot(_ rows: [[Item]]) -> ResultsSnapshot<Item, Notebook> {
            ResultsSnapshot(sections: zip(notebooks, rows).map { notebook, items in
                ResultsSection(id: .object(notebook.id.rawValue), value: .value(notebook), rows: items.map { .item($0) })
            })
        }
        let old = snapshot(rows)

        // Deletes (by position in the old snapshot); the rows left keep their order (their
        // index as a sort key); moved and inserted rows get a random key in their new section.
        var deleted = Set<Int>()
        while deleted.count < Int(Double(shape.rows) * shape.deleted) { deleted.insert(below(shape.rows)) }
        var position = -1
        var keyed: [[(key: Double, item: Item)]] = old.sections.map { section in
            var kept: [(key: Double, item: Item)] = []
            for row in section.rows {
                position += 1
                if !deleted.contains(position) { kept.append((Double(kept.count), row.item!)) }
            }
            return kept
        }
        var moved = Set<Int>()  // positions among all kept rows
        let keptCount = keyed.reduce(0) { $0 + $1.count }
        while moved.count < Int(Double(shape.rows) * shape.moved) { moved.insert(below(keptCount)) }
        var movedItems: [(section: Int, item: Item)] = []
        position = -1
        for s in keyed.indices {
            keyed[s].removeAll { entry in
                position += 1
                guard moved.contains(position) else { return false }
                movedItems.append((s, entry.item))
                return true
            }
        }
        let staying = keyed.map(\.count)
        func randomKey(in section: Int) -> Double {
            Double(random.next(upperBound: UInt64(1) << 52)) / Double(UInt64(1) << 52) * Double(staying[section] + 1) - 1
        }
        for (m, entry) in movedItems.enumerated() {
            // Half the moves stay in their section, half go to another one.
            var to = entry.section
            if m % 2 == 1 && shape.sections > 1 {
                while to == entry.section { to = below(shape.sections) }
            }
            keyed[to].append((randomKey(in: to), entry.item))
        }
        var next = Int64(shape.rows)
        for _ in 0..<Int(Double(shape.rows) * shape.inserted) {
            next += 1
            let to = below(shape.sections)
            keyed[to].append((randomKey(in: to), makeItem(next, &random)))
        }
        rows = keyed.map { section in section.sorted { $0.key < $1.key }.map(\.item) }
        return (old, snapshot(rows))
    }
}

/// An item identified by a UUID, as many `Identifiable` types are.
struct UUIDItem: Identifiable, ResultsItem {
    var id: UUID
    var title: String
}
