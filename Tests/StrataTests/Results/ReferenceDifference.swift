import Foundation
import Testing

@testable import Strata

// The identity difference as it was first written (hash sets and dictionaries of row keys,
// a longest increasing subsequence as a set), kept as the reference that the optimized
// `ChangeBatch(from:to:)` must equal batch for batch.

extension ChangeBatch {
    /// The reference identity difference.
    init<Item, Section>(
        referenceFrom old: ResultsSnapshot<Item, Section>, to new: ResultsSnapshot<Item, Section>,
        changedSections: Set<SectionID>?
    ) {
        func mayHaveChanged(_ id: SectionID) -> Bool { changedSections?.contains(id) ?? true }
        let sections = ReferenceSectionMatching(from: old, to: new)
        let oldToNew = sections.oldToNew
        let newIsInserted = sections.newIsInserted
        let sectionDeletes = sections.deletes

        // Rows: where each row of the new snapshot is.
        var newRowPath: [ResultsRowID<Item.ID>: ItemPath] = [:]
        for (n, section) in new.sections.enumerated() where mayHaveChanged(section.id) {
            for (r, row) in section.rows.enumerated() {
                newRowPath[row.key(in: section.id)] = ItemPath(section: n, item: r)
            }
        }
        var itemDeletes: [ItemPath] = []
        var itemMoves: [Move<ItemPath>] = []
        var itemUpdates: [ItemPath] = []
        var movedAndUpdatedItems: [ItemPath] = []
        var oldRowKeys = Set<ResultsRowID<Item.ID>>()
        for (o, section) in old.sections.enumerated() {
            guard let mappedSection = oldToNew[o] else { continue }  // the section delete takes its rows
            guard mayHaveChanged(section.id) else { continue }  // same rows before and after
            var candidates: [(oldRow: Int, newRow: Int)] = []
            for (r, row) in section.rows.enumerated() {
                let key = row.key(in: section.id)
                oldRowKeys.insert(key)
                let oldPath = ItemPath(section: o, item: r)
                guard let newPath = newRowPath[key], !newIsInserted[newPath.section] else {
                    itemDeletes.append(oldPath)  // gone, or gone into a section that is inserted
                    continue
                }
                if newPath.section == mappedSection {
                    candidates.append((r, newPath.item))
                } else {
                    itemMoves.append(Move(from: oldPath, to: newPath))
                    if row != new[newPath] { movedAndUpdatedItems.append(newPath) }
                }
            }
            let stayingRows = referenceLongestIncreasingSubsequence(candidates.map(\.newRow))
            for (k, pair) in candidates.enumerated() {
                let oldPath = ItemPath(section: o, item: pair.oldRow)
                let newPath = ItemPath(section: mappedSection, item: pair.newRow)
                let changed = section.rows[pair.oldRow] != new[newPath]
                if stayingRows.contains(k) {
                    if changed { itemUpdates.append(oldPath) }
                } else {
                    itemMoves.append(Move(from: oldPath, to: newPath))
                    if changed { movedAndUpdatedItems.append(newPath) }
                }
            }
        }
        // Deleted old sections' rows still count as "old" for insert detection: a row that
        // left a deleted section is inserted into its new one.
        var deletedSectionRowKeys = Set<ResultsRowID<Item.ID>>()
        for o in sectionDeletes {
            for row in old.sections[o].rows { deletedSectionRowKeys.insert(row.key(in: old.sections[o].id)) }
        }
        var itemInserts: [ItemPath] = []
        for (n, section) in new.sections.enumerated() where !newIsInserted[n] && mayHaveChanged(section.id) {
            for (r, row) in section.rows.enumerated() {
                let key = row.key(in: section.id)
                if !oldRowKeys.contains(key) || deletedSectionRowKeys.contains(key) {
                    itemInserts.append(ItemPath(section: n, item: r))
                }
            }
        }
        self.init(
            sectionDeletes: sectionDeletes, sectionInserts: sections.inserts, sectionMoves: sections.moves,
            sectionUpdates: sections.updates, movedAndUpdatedSections: sections.movedAndUpdated,
            itemDeletes: itemDeletes, itemInserts: itemInserts, itemMoves: itemMoves,
            itemUpdates: itemUpdates, movedAndUpdatedItems: movedAndUpdatedItems
        )
    }
}

/// The positions (in `values`) of one longest strictly increasing subsequence of `values`.
/// O(n log n) (patience sorting).
func referenceLongestIncreasingSubsequence(_ values: [Int]) -> Set<Int> {
    if values.isEmpty { return [] }
    var tails: [Int] = []  // tails[k]: position of the smallest tail of an increasing run of length k+1
    var previous = [Int](repeating: -1, count: values.count)
    for (i, value) in values.enumerated() {
        var low = 0
        var high = tails.count
        while low < high {
            let mid = (low + high) / 2
            if values[tails[mid]] < value { low = mid + 1 } else { high = mid }
        }
        if low > 0 { previous[i] = tails[low - 1] }
        if low == tails.count { tails.append(i) } else { tails[low] = i }
    }
    var result = Set<Int>()
    var i = tails[tails.count - 1]
    while i >= 0 {
        result.insert(i)
        i = previous[i]
    }
    return result
}

/// Sections matched by identity between two snapshots, and the section half of their batch.
/// O(s log s) for s sections.
struct ReferenceSectionMatching {
    /// For each new section, its index.
    var newIndex: [SectionID: Int] = [:]
    /// For each old section, its new index; nil when it is deleted.
    var oldToNew: [Int?]
    /// For each new section, whether it is inserted.
    var newIsInserted: [Bool]
    var deletes: [Int] = []
    var inserts: [Int] = []
    var moves: [Move<Int>] = []
    var updates: [Int] = []
    var movedAndUpdated: [Int] = []

    init<Item, Section>(from old: ResultsSnapshot<Item, Section>, to new: ResultsSnapshot<Item, Section>) {
        newIndex.reserveCapacity(new.sections.count)
        for (n, section) in new.sections.enumerated() { newIndex[section.id] = n }
        oldToNew = [Int?](repeating: nil, count: old.sections.count)
        newIsInserted = [Bool](repeating: true, count: new.sections.count)
        var kept: [(old: Int, new: Int)] = []
        for (o, section) in old.sections.enumerated() {
            if let n = newIndex[section.id] {
                oldToNew[o] = n
                newIsInserted[n] = false
                kept.append((o, n))
            } else {
                deletes.append(o)
            }
        }
        inserts = newIsInserted.indices.filter { newIsInserted[$0] }
        let staying = referenceLongestIncreasingSubsequence(kept.map(\.new))
        for (k, pair) in kept.enumerated() {
            let changed = old.sections[pair.old].value != new.sections[pair.new].value
            if staying.contains(k) {
                if changed { updates.append(pair.old) }
            } else {
                moves.append(Move(from: pair.old, to: pair.new))
                if changed { movedAndUpdated.append(pair.new) }
            }
        }
    }
}
