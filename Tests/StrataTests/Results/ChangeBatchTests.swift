import Foundation
import Strata
import Testing

/// A tiny item for the pure tests: identity plus a version that stands for "its values".
struct Row: Identifiable, ResultsItem, CustomStringConvertible {
    var id: Int
    var version: Int = 0
    var description: String { version == 0 ? "\(id)" : "\(id)v\(version)" }
}

typealias Snap = ResultsSnapshot<Row, String>

/// Builds a snapshot from a compact description: `[("A", [1, 2]), ("B", [])]`. A section
/// name with a `'` is a changed value of the section without it (same identity).
func snap(_ sections: [(String, [Row])], groups: [String: [Row]] = [:]) -> Snap {
    Snap(
        sections: sections.map { name, rows in
            let id = String(name.prefix { $0 != "'" })
            var all = rows.map { ResultsRow.item($0) }
            if let group = groups[id], !group.isEmpty { all.append(.group(group)) }
            return ResultsSection(id: .key(id.databaseValue), value: .value(name), rows: all)
        })
}

func r(_ ids: Int...) -> [Row] { ids.map { Row(id: $0) } }

/// Checks the crash-free guarantee for one pair of snapshots.
func checkRoundTrip(_ old: Snap, _ new: Snap, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let batch = ChangeBatch(from: old, to: new)
    do {
        try BatchValidator.validate(batch, from: old, to: new)
        let replayed = try batch.apply(to: old, reading: new)
        #expect(replayed == new, "replay differs\nold: \(old.debugText)\nnew: \(new.debugText)\nbatch: \(batch)",
            sourceLocation: sourceLocation)
        #expect(uikitReplay(batch, from: old, to: new) == new,
            "UIKit's replay differs\nold: \(old.debugText)\nnew: \(new.debugText)\nbatch: \(batch)",
            sourceLocation: sourceLocation)
    } catch {
        Issue.record("\(error)\nold: \(old.debugText)\nnew: \(new.debugText)\nbatch: \(batch)", sourceLocation: sourceLocation)
        throw error
    }
    // Section updates only for sections whose value changed.
    for s in batch.sectionUpdates {
        let id = old.sections[s].id
        #expect(old.sections[s].value != new.sections[new.index(ofSection: id)!].value, sourceLocation: sourceLocation)
    }
    // An identity batch is empty.
    #expect(ChangeBatch(from: old, to: old).isEmpty, sourceLocation: sourceLocation)
}

extension ResultsSnapshot where Item == Row, Section == String {
    var debugText: String {
        sections.map { section in
            let rows = section.rows.map { row -> String in
                switch row {
                case .item(let item): "\(item)"
                case .group(let items): "{" + items.map { "\($0)" }.joined(separator: " ") + "}"
                }
            }
            return "\(section.value.object ?? "∅")[" + rows.joined(separator: " ") + "]"
        }.joined(separator: " ")
    }
}


@Suite struct ChangeBatchTests {
    @Test func identicalSnapshotsGiveAnEmptyBatch() {
        let s = snap([("A", r(1, 2)), ("B", [])])
        #expect(ChangeBatch(from: s, to: s).isEmpty)
    }

    @Test func insertsAndDeletesOfSectionsCarryTheirRows() throws {
        let old = snap([("A", r(1, 2)), ("B", r(3))])
        let new = snap([("B", r(3)), ("C", r(1, 4))])
        let batch = ChangeBatch(from: old, to: new)
        #expect(batch == ChangeBatch(sectionDeletes: [0], sectionInserts: [1]))
        try checkRoundTrip(old, new)
    }

    @Test func itemLeavingADeletedSectionIsAnInsert() throws {
        let old = snap([("A", r(1)), ("B", r(2))])
        let new = snap([("B", r(2, 1))])
        #expect(ChangeBatch(from: old, to: new) == ChangeBatch(sectionDeletes: [0], itemInserts: [ItemPath(section: 0, item: 1)]))
        try checkRoundTrip(old, new)
    }

    @Test func itemEnteringAnInsertedSectionIsADelete() throws {
        let old = snap([("A", r(1, 2))])
        let new = snap([("B", r(2)), ("A", r(1))])
        #expect(ChangeBatch(from: old, to: new) == ChangeBatch(sectionInserts: [0], itemDeletes: [ItemPath(section: 0, item: 1)]))
        try checkRoundTrip(old, new)
    }

    @Test func movesAreMinimal() throws {
        let old = snap([("A", r(1, 2, 3, 4, 5))])
        let new = snap([("A", r(2, 3, 4, 5, 1))])
        let batch = ChangeBatch(from: old, to: new)
        #expect(batch == ChangeBatch(itemMoves: [Move(from: ItemPath(section: 0, item: 0), to: ItemPath(section: 0, item: 4))]))
        try checkRoundTrip(old, new)
    }

    @Test func updatedItemThatMovesIsAMoveListedAsMovedAndUpdated() throws {
        let old = snap([("A", r(1, 2)), ("B", r(3))])
        let new = snap([("A", r(2)), ("B", [Row(id: 1, version: 1), Row(id: 3, version: 1)])])
        let batch = ChangeBatch(from: old, to: new)
        #expect(
            batch
                == ChangeBatch(
                    itemMoves: [Move(from: ItemPath(section: 0, item: 0), to: ItemPath(section: 1, item: 0))],
                    itemUpdates: [ItemPath(section: 1, item: 0)],
                    movedAndUpdatedItems: [ItemPath(section: 1, item: 0)]))
        try checkRoundTrip(old, new)
    }

    @Test func sectionRenamedAndMoved() throws {
        let old = snap([("A", r(1)), ("B", r(2)), ("C", [])])
        let renamed = snap([("A'", r(1)), ("B", r(2)), ("C", [])])
        #expect(ChangeBatch(from: old, to: renamed) == ChangeBatch(sectionUpdates: [0]))
        let movedToo = snap([("B", r(2)), ("C", []), ("A'", r(1))])
        #expect(
            ChangeBatch(from: old, to: movedToo)
                == ChangeBatch(sectionMoves: [Move(from: 0, to: 2)], movedAndUpdatedSections: [2]))
        try checkRoundTrip(old, renamed)
        try checkRoundTrip(old, movedToo)
    }

    @Test func groupRowsAppearChangeAndDisappear() throws {
        let plain = snap([("A", r(1, 2)), ("B", r(3))])
        let grouped = snap([("A", r(1)), ("B", r(3))], groups: ["A": r(2)])
        #expect(
            ChangeBatch(from: plain, to: grouped)
                == ChangeBatch(itemDeletes: [ItemPath(section: 0, item: 1)], itemInserts: [ItemPath(section: 0, item: 1)]))
        let grouped2 = snap([("A", []), ("B", r(3))], groups: ["A": r(1, 2)])
        #expect(
            ChangeBatch(from: grouped, to: grouped2)
                == ChangeBatch(itemDeletes: [ItemPath(section: 0, item: 0)], itemUpdates: [ItemPath(section: 0, item: 1)]))
        try checkRoundTrip(plain, grouped)
        try checkRoundTrip(grouped, grouped2)
        try checkRoundTrip(grouped2, plain)
    }

    /// Every pair of small snapshots: sections from {A, B}, items {1, 2, 3} placed anywhere
    /// in any order, item 1 and section A each in two versions.
    @Test func exhaustiveSmallSnapshots() throws {
        var all: [Snap] = []
        let sectionOrders: [[String]] = [[], ["A"], ["B"], ["A", "B"], ["B", "A"]]
        func placements(_ items: [Int], into count: Int) -> [[[Int]]] {
            // Every way to put each item in one of `count` ordered lists, or nowhere.
            var results: [[[Int]]] = [Array(repeating: [], count: count)]
            for item in items {
                var next: [[[Int]]] = []
                for lists in results {
                    next.append(lists)  // absent
                    for l in 0..<count {
                        for position in 0...lists[l].count {
                            var copy = lists
                            copy[l].insert(item, at: position)
                            next.append(copy)
                        }
                    }
                }
                results = next
            }
            return results
        }
        for order in sectionOrders {
            for lists in placements([1, 2, 3], into: order.count) {
                for variant in 0..<4 {
                    let sections = zip(order, lists).map { name, ids -> (String, [Row]) in
                        let sectionName = (name == "A" && variant & 1 != 0) ? "A'" : name
                        return (sectionName, ids.map { Row(id: $0, version: ($0 == 1 && variant & 2 != 0) ? 1 : 0) })
                    }
                    all.append(snap(sections))
                }
            }
        }
        #expect(all.count == 524)
        for old in all {
            for new in all {
                let batch = ChangeBatch(from: old, to: new)
                do {
                    try BatchValidator.validate(batch, from: old, to: new)
                    let replayed = try batch.apply(to: old, reading: new)
                    if replayed != new || uikitReplay(batch, from: old, to: new) != new {
                        Issue.record("replay differs\nold: \(old.debugText)\nnew: \(new.debugText)\nbatch: \(batch)")
                        return
                    }
                } catch {
                    Issue.record("\(error)\nold: \(old.debugText)\nnew: \(new.debugText)\nbatch: \(batch)")
                    return
                }
            }
        }
    }

    /// Random snapshots with up to 6 sections, 30 items, versions and group rows.
    @Test(arguments: 0..<40) func randomSnapshots(seed: UInt64) throws {
        var generator = SeededGenerator(seed: seed)
        func randomSnapshot() -> Snap {
            let names = ["A", "B", "C", "D", "E", "F"].filter { _ in Bool.random(using: &generator) }.shuffled(
                using: &generator)
            var lists: [[Row]] = Array(repeating: [], count: names.count)
            var groups: [String: [Row]] = [:]
            if !names.isEmpty {
                for id in 0..<30 where Int.random(in: 0..<4, using: &generator) != 0 {
                    let l = Int.random(in: 0..<names.count, using: &generator)
                    let row = Row(id: id, version: Int.random(in: 0..<3, using: &generator) == 0 ? 1 : 0)
                    if Int.random(in: 0..<6, using: &generator) == 0 {
                        groups[names[l], default: []].append(row)
                    } else {
                        lists[l].insert(row, at: Int.random(in: 0...lists[l].count, using: &generator))
                    }
                }
            }
            let sections = zip(names, lists).map { name, rows in
                (Int.random(in: 0..<4, using: &generator) == 0 ? name + "'" : name, rows)
            }
            return snap(sections, groups: groups)
        }
        for _ in 0..<200 {
            let old = randomSnapshot()
            let new = randomSnapshot()
            old._checkInvariants()
            do {
                try checkRoundTrip(old, new)
            } catch {
                Issue.record("seed \(seed)")
                return
            }
        }
    }
}

@Suite struct BatchValidatorTests {
    let counts = [2, 1, 0]

    /// One row per bad batch and the exact error.
    @Test func rejectsEveryKindOfInconsistency() {
        let p = ItemPath.init(section:item:)
        let table: [(ChangeBatch, [Int], BatchValidationError)] = [
            (ChangeBatch(sectionDeletes: [3]), [2, 1, 0], .sectionOutOfRange(.delete, section: 3, count: 3)),
            (ChangeBatch(sectionDeletes: [0, 0]), [1, 0], .duplicateSection(.delete, section: 0)),
            (ChangeBatch(sectionDeletes: [0], sectionMoves: [Move(from: 0, to: 0)]), [1, 0, 0],
             .conflictingSectionOperations(.delete, .moveFrom, section: 0)),
            (ChangeBatch(sectionInserts: [1], sectionMoves: [Move(from: 0, to: 1)]), [0, 0, 0, 0],
             .conflictingSectionOperations(.insert, .moveTo, section: 1)),
            (ChangeBatch(sectionInserts: [0]), [2, 1, 0], .invalidNumberOfSections(old: 3, new: 3, inserted: 1, deleted: 0)),
            (ChangeBatch(movedAndUpdatedSections: [1]), [2, 1, 0], .movedAndUpdatedSectionNotMoved(section: 1)),
            (ChangeBatch(itemDeletes: [p(0, 2)]), [1, 1, 0], .itemOutOfRange(.delete, path: p(0, 2), count: 2)),
            (ChangeBatch(sectionDeletes: [1], itemDeletes: [p(1, 0)]), [2, 0], .itemInDeletedSection(.delete, path: p(1, 0))),
            (ChangeBatch(sectionInserts: [0], itemInserts: [p(0, 0)]), [1, 2, 1, 0],
             .itemInInsertedSection(.insert, path: p(0, 0))),
            (ChangeBatch(itemDeletes: [p(0, 0)], itemUpdates: [p(0, 0)]), [1, 1, 0],
             .conflictingItemOperations(.delete, .update, path: p(0, 0))),
            (ChangeBatch(itemMoves: [Move(from: p(0, 0), to: p(0, 1))], itemUpdates: [p(0, 0)]), [2, 1, 0],
             .conflictingItemOperations(.update, .moveFrom, path: p(0, 0))),
            (ChangeBatch(itemInserts: [p(0, 1)], itemMoves: [Move(from: p(1, 0), to: p(0, 1))]), [4, 0, 0],
             .conflictingItemOperations(.insert, .moveTo, path: p(0, 1))),
            (ChangeBatch(movedAndUpdatedItems: [p(0, 0)]), [2, 1, 0], .movedAndUpdatedItemNotMoved(path: p(0, 0))),
            (ChangeBatch(itemInserts: [p(0, 0)]), [2, 1, 0],
             .invalidNumberOfItems(section: 0, oldSection: 0, old: 2, new: 2, inserted: 1, deleted: 0, movedIn: 0, movedOut: 0)),
            (ChangeBatch(itemMoves: [Move(from: p(0, 0), to: p(1, 0))]), [2, 1, 0],
             .invalidNumberOfItems(section: 0, oldSection: 0, old: 2, new: 2, inserted: 0, deleted: 0, movedIn: 0, movedOut: 1)),
            // Moves out of a deleted section and into an inserted one; updates in a deleted one.
            (ChangeBatch(sectionDeletes: [0], itemMoves: [Move(from: p(0, 0), to: p(0, 1))]), [2, 0],
             .itemInDeletedSection(.moveFrom, path: p(0, 0))),
            (ChangeBatch(sectionInserts: [0], itemMoves: [Move(from: p(0, 0), to: p(0, 0))]), [1, 1, 1, 0],
             .itemInInsertedSection(.moveTo, path: p(0, 0))),
            (ChangeBatch(sectionDeletes: [0], itemUpdates: [p(0, 1)]), [1, 0], .itemInDeletedSection(.update, path: p(0, 1))),
            // A section both updated and moved, or deleted and updated.
            (ChangeBatch(sectionMoves: [Move(from: 0, to: 1)], sectionUpdates: [0]), [1, 2, 0],
             .conflictingSectionOperations(.update, .moveFrom, section: 0)),
            (ChangeBatch(sectionDeletes: [2], sectionUpdates: [2]), [2, 1],
             .conflictingSectionOperations(.delete, .update, section: 2)),
            // Move targets out of range of the new section.
            (ChangeBatch(itemMoves: [Move(from: p(0, 0), to: p(1, 2))]), [1, 2, 0],
             .itemOutOfRange(.moveTo, path: p(1, 2), count: 2)),
        ]
        for (batch, newCounts, expected) in table {
            #expect(throws: expected, "\(batch)") { try BatchValidator.validate(batch, oldCounts: counts, newCounts: newCounts) }
        }
    }

    @Test func messagesUseUIKitWords() {
        let error = BatchValidationError.invalidNumberOfItems(
            section: 1, oldSection: 0, old: 2, new: 4, inserted: 1, deleted: 0, movedIn: 0, movedOut: 0)
        #expect(error.description.hasPrefix("invalid number of rows in section 1. The number of rows contained"))
    }

    @Test func acceptsMovesOfRowsInsideMovedSections() throws {
        // Old: A[a b] B[c]. New: B[c a] A[b]. Section A moves 0→1, row a moves (0,0)→(0,1).
        let batch = ChangeBatch(
            sectionMoves: [Move(from: 0, to: 1)],
            itemMoves: [Move(from: ItemPath(section: 0, item: 0), to: ItemPath(section: 0, item: 1))])
        try BatchValidator.validate(batch, oldCounts: [2, 1], newCounts: [2, 1])
    }
}

@Test func itemPathsConvertToIndexPaths() {
    let path = ItemPath(section: 2, item: 5)
    let indexPath = IndexPath(path)
    #expect(Array(indexPath) == [2, 5])
    #expect(ItemPath(indexPath) == path)
}

@Test func snapshotDescriptionListsSectionsAndRowIDs() {
    let s = snap([("A", r(1, 2)), ("B", [])], groups: ["A": r(3)])
    #expect(s.description == "A: [1, 2, {3}]\nB: []")
}

@Test func uikitReplayFollowsTheBatchNotTheTarget() {
    let old = snap([("A", r(1, 2, 3))]), new = snap([("A", r(3, 1, 2))])
    let p = ItemPath.init(section:item:)
    #expect(uikitReplay(ChangeBatch(itemMoves: [Move(from: p(0, 2), to: p(0, 0))]), from: old, to: new) == new)
    // Valid batches that describe another change do not replay to `new`.
    #expect(uikitReplay(ChangeBatch(itemMoves: [Move(from: p(0, 0), to: p(0, 2))]), from: old, to: new) != new)
    #expect(uikitReplay(ChangeBatch(), from: snap([("A", [Row(id: 1)])]), to: snap([("A", [Row(id: 1, version: 1)])])) != nil)
    #expect(
        uikitReplay(ChangeBatch(), from: snap([("A", [Row(id: 1)])]), to: snap([("A", [Row(id: 1, version: 1)])]))
            != snap([("A", [Row(id: 1, version: 1)])]))
    // Sections: a move and an update of the moved section's value.
    let oldSections = snap([("A", r(1)), ("B", r(2))]), newSections = snap([("B", r(2)), ("A'", r(1))])
    #expect(
        uikitReplay(ChangeBatch(sectionMoves: [Move(from: 0, to: 1)], movedAndUpdatedSections: [1]), from: oldSections, to: newSections)
            == newSections)
    #expect(uikitReplay(ChangeBatch(sectionMoves: [Move(from: 0, to: 1)]), from: oldSections, to: newSections) != newSections)
}
