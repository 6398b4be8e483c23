import Foundation
import Testing

@testable import Strata

/// The batch the engine builds from its journal of changed rows
/// (`ChangeBatch(from:to:rowChanges:)`), on random pairs of snapshots where only the journaled
/// rows changed: it must pass the validator, replay exactly (with `apply` and with the
/// independent UIKit model), never move an unchanged row, and report as many moves as the
/// identity difference when only one row changed.
@Suite struct JournalBatchTests {
    /// A random old snapshot, a random set of changed rows, and a new snapshot where only
    /// those rows moved, changed, appeared or went; plus the journal of their places.
    struct Case {
        var old: Snap
        var new: Snap
        var changes: [RowChange]
        var changed: Set<Int>
    }

    static func randomCase(_ generator: inout SeededGenerator, maxChanged: Int) -> Case {
        let names = ["A", "B", "C", "D", "E"]
        var nextID = 1
        var old: [(String, [Row])] = []
        for name in names where Int.random(in: 0..<4, using: &generator) > 0 {
            let count = Int.random(in: 0..<6, using: &generator)
            old.append((name, (0..<count).map { _ in
                defer { nextID += 1 }
                return Row(id: nextID)
            }))
        }
        old.shuffle(using: &generator)
        let oldIDs = old.flatMap { $0.1.map(\.id) }
        let changedCount = min(oldIDs.count, Int.random(in: 0...maxChanged, using: &generator))
        var changed = Set(oldIDs.shuffled(using: &generator).prefix(changedCount))
        // New rows join the changed ones.
        for _ in 0..<Int.random(in: 0...2, using: &generator) {
            changed.insert(nextID)
            nextID += 1
        }
        // New sections: some old ones go, some new ones come, some are renamed, order shuffled.
        var new: [(String, [Row])] = []
        for (name, rows) in old where Int.random(in: 0..<6, using: &generator) > 0 {
            let renamed = Int.random(in: 0..<4, using: &generator) == 0 ? name + "'" : name
            new.append((renamed, rows.filter { !changed.contains($0.id) }))
        }
        for name in ["F", "G"] where Int.random(in: 0..<3, using: &generator) == 0 { new.append((name, [])) }
        new.shuffle(using: &generator)
        // Changed rows: gone, or placed anywhere, possibly with a new value.
        for id in changed.sorted() where !new.isEmpty && Int.random(in: 0..<4, using: &generator) > 0 {
            let s = Int.random(in: 0..<new.count, using: &generator)
            let at = Int.random(in: 0...new[s].1.count, using: &generator)
            new[s].1.insert(Row(id: id, version: Int.random(in: 0..<2, using: &generator)), at: at)
        }
        let oldSnap = snap(old), newSnap = snap(new)
        func places(_ snapshot: Snap) -> [Int: RowChange.Place] {
            var result: [Int: RowChange.Place] = [:]
            for section in snapshot.sections {
                for (index, row) in section.rows.enumerated() where changed.contains(row.item!.id) {
                    result[row.item!.id] = RowChange.Place(section: section.id, index: index)
                }
            }
            return result
        }
        let before = places(oldSnap), after = places(newSnap)
        let changes = changed.sorted().map { RowChange(old: before[$0], new: after[$0]) }
        return Case(old: oldSnap, new: newSnap, changes: changes, changed: changed)
    }

    static func check(_ test: Case, _ context: String) throws {
        let batch = ChangeBatch(from: test.old, to: test.new, rowChanges: test.changes)
        let description = "\(context)\nold: \(test.old.debugText)\nnew: \(test.new.debugText)\nbatch: \(batch)"
        do {
            try BatchValidator.validate(batch, from: test.old, to: test.new)
            #expect(try batch.apply(to: test.old, reading: test.new) == test.new, "replay differs \(description)")
            #expect(uikitReplay(batch, from: test.old, to: test.new) == test.new, "UIKit replay differs \(description)")
        } catch {
            Issue.record("\(error) \(description)")
            return
        }
        for move in batch.itemMoves {
            let id = test.old[move.from].item!.id
            #expect(test.changed.contains(id), "unchanged row \(id) moved \(description)")
        }
        // With one changed row, no fewer moves are possible than the journal's.
        if test.changes.count == 1 {
            let identity = ChangeBatch(from: test.old, to: test.new)
            #expect(batch.itemMoves.count == identity.itemMoves.count, "more moves than needed \(description)")
        }
    }

    @Test(arguments: 0..<300) func randomJournals(seed: UInt64) throws {
        var generator = SeededGenerator(seed: seed)
        for round in 0..<20 {
            try Self.check(Self.randomCase(&generator, maxChanged: round % 2 == 0 ? 1 : 6), "seed \(seed), round \(round)")
        }
    }

    /// A row that moves by one place is reported moved, never its unchanged neighbour.
    @Test func theChangedRowMovesNotItsNeighbour() throws {
        let old = snap([("A", r(1, 2, 3))])
        let new = snap([("A", [Row(id: 1), Row(id: 3), Row(id: 2, version: 1)])])
        let journal = [
            RowChange(
                old: RowChange.Place(section: old.sections[0].id, index: 1),
                new: RowChange.Place(section: old.sections[0].id, index: 2))
        ]
        let batch = ChangeBatch(from: old, to: new, rowChanges: journal)
        #expect(batch.description == "i>[[0, 1]→[0, 2]] i>~[[0, 2]]")
    }
}
