import Foundation
import Strata

/// The identity difference of two snapshots, on its own: Strata's `ChangeBatch(from:to:)`
/// beside the standard library's `CollectionDifference` (`difference(from:)` then
/// `inferringMoves()`) on the same rows flattened into arrays of ids, in the same run.
///
/// Two snapshots are built in memory (no store), with a fixed seed: N notes spread at random
/// over S notebook sections, then a new snapshot where 10% of the rows are deleted, 10% new
/// rows are inserted at random places, and 2% of the rows move (half to another place in
/// their section, half to a random place in another section). Every batch is checked by
/// replaying it on the old snapshot, outside the timed region.
struct IdentityDifferenceBenchmark {
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

    struct Figures {
        var shape: Shape
        /// The item type, and so the path taken (`Note`: ids are row ids; `UUIDItem`: generic).
        var item: String
        var strata: Samples
        var stdlib: Samples?
        /// What the batch reports: deletes, inserts, moves.
        var batchCounts: (deletes: Int, inserts: Int, moves: Int)
        /// What `CollectionDifference` reports: removals, insertions, and how many of them are
        /// paired as moves by `inferringMoves()`.
        var stdlibCounts: (removals: Int, insertions: Int, moves: Int)?
    }

    var strataRuns = (warmUp: 3, repetitions: 21)
    var stdlibRuns = (warmUp: 0, repetitions: 3)

    /// Strata (Note and UUIDItem) and the standard library on the sectioned shape; Strata on
    /// the flat shape.
    func run(rows: Int, withStdlib: Bool) throws -> [Figures] {
        var figures: [Figures] = []
        let sectioned = Shape(rows: rows, sections: 50)
        figures.append(try measureShape(sectioned, withStdlib: withStdlib, makeItem: Self.note))
        figures.append(try measureShape(sectioned, withStdlib: false, makeItem: Self.uuidItem))
        figures.append(try measureShape(Shape(rows: rows, sections: 1), withStdlib: false, makeItem: Self.note))
        return figures
    }

    func measureShape<Item: ResultsItem>(
        _ shape: Shape, withStdlib: Bool, makeItem: (Int64, inout SplitMix64) -> Item
    ) throws -> Figures where Item.ID: Sendable {
        let (old, new) = Self.snapshots(shape, seed: 2026, makeItem: makeItem)
        let itemName = String(describing: Item.self)
        log("   identity difference, \(shape), \(itemName)")

        // Strata.
        var batch = ChangeBatch()
        let strata = measure(warmUp: strataRuns.warmUp, repetitions: strataRuns.repetitions) {
            let start = now()
            batch = ChangeBatch(from: old, to: new)
            return now() - start
        }
        let replayed = try batch.apply(to: old, reading: new)
        guard replayed == new else { throw BenchmarkError.resultsDiffer("the identity batch does not replay") }
        log("     ChangeBatch(from:to:) \(formatMilliseconds(strata.medianMilliseconds)): "
            + "\(batch.itemDeletes.count) deletes, \(batch.itemInserts.count) inserts, \(batch.itemMoves.count) moves")
        var figures = Figures(
            shape: shape, item: itemName, strata: strata,
            batchCounts: (batch.itemDeletes.count, batch.itemInserts.count, batch.itemMoves.count))

        // The standard library, on the flattened ids.
        if withStdlib {
            let oldIDs = old.sections.flatMap { $0.rows.compactMap { $0.item?.objectID } }
            let newIDs = new.sections.flatMap { $0.rows.compactMap { $0.item?.objectID } }
            var difference = newIDs.difference(from: oldIDs)
            let stdlib = measure(warmUp: stdlibRuns.warmUp, repetitions: stdlibRuns.repetitions) {
                let start = now()
                difference = newIDs.difference(from: oldIDs).inferringMoves()
                return now() - start
            }
            guard oldIDs.applying(difference) == newIDs else {
                throw BenchmarkError.resultsDiffer("the standard library's difference does not apply")
            }
            let moves = difference.insertions.count { change in
                if case .insert(_, _, let associated) = change { return associated != nil }
                return false
            }
            figures.stdlib = stdlib
            figures.stdlibCounts = (difference.removals.count, difference.insertions.count, moves)
            log("     CollectionDifference \(formatMilliseconds(stdlib.medianMilliseconds)): "
                + "\(difference.removals.count) removals, \(difference.insertions.count) insertions, \(moves) moves")
        }
        return figures
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
