// MARK: - Computing a batch from two snapshots

extension ChangeBatch {
    /// The batch that turns `old` into `new`, matching sections by ``SectionID`` and rows by
    /// item id (a group row by its section).
    ///
    /// Runs in O(n log n) for n rows: hashing finds what was deleted, inserted and kept, and a
    /// longest increasing subsequence picks the largest set of kept sections (and of kept
    /// rows inside each section) that need not move, so the batch reports as few moves as
    /// possible. The result obeys every rule listed on ``ChangeBatch``.
    ///
    /// ```swift
    /// let batch = ChangeBatch(from: oldSnapshot, to: newSnapshot)
    /// let replayed = try batch.apply(to: oldSnapshot, reading: newSnapshot)
    /// assert(replayed == newSnapshot)
    /// ```
    public init<Item, Section>(from old: ResultsSnapshot<Item, Section>, to new: ResultsSnapshot<Item, Section>) {
        self.init(from: old, to: new, changedSections: nil)
    }

    /// The batch from `old` to `new` when only the rows of `changedSections` may differ (every
    /// other section present in both has the same rows): row work is proportional to those
    /// sections and to deleted sections; section work to the number of sections. Nil means
    /// that any section may have changed.
    init<Item, Section>(
        from old: ResultsSnapshot<Item, Section>, to new: ResultsSnapshot<Item, Section>,
        changedSections: Set<SectionID>?
    ) {
        func mayHaveChanged(_ id: SectionID) -> Bool { changedSections?.contains(id) ?? true }
        // Sections.
        var newSectionIndex: [SectionID: Int] = [:]
        newSectionIndex.reserveCapacity(new.sections.count)
        for (n, section) in new.sections.enumerated() { newSectionIndex[section.id] = n }
        var oldToNew = [Int?](repeating: nil, count: old.sections.count)
        var newIsInserted = [Bool](repeating: true, count: new.sections.count)
        var sectionDeletes: [Int] = []
        var kept: [(old: Int, new: Int)] = []
        for (o, section) in old.sections.enumerated() {
            if let n = newSectionIndex[section.id] {
                oldToNew[o] = n
                newIsInserted[n] = false
                kept.append((o, n))
            } else {
                sectionDeletes.append(o)
            }
        }
        let sectionInserts = newIsInserted.indices.filter { newIsInserted[$0] }
        let staying = longestIncreasingSubsequence(kept.map(\.new))
        var sectionMoves: [Move<Int>] = []
        var sectionUpdates: [Int] = []
        var movedAndUpdatedSections: [Int] = []
        for (k, pair) in kept.enumerated() {
            let changed = old.sections[pair.old].value != new.sections[pair.new].value
            if staying.contains(k) {
                if changed { sectionUpdates.append(pair.old) }
            } else {
                sectionMoves.append(Move(from: pair.old, to: pair.new))
                if changed { movedAndUpdatedSections.append(pair.new) }
            }
        }

        // Rows: where each row of the new snapshot is.
        var newRowPath: [RowKey<Item.ID>: ItemPath] = [:]
        for (n, section) in new.sections.enumerated() where mayHaveChanged(section.id) {
            for (r, row) in section.rows.enumerated() {
                newRowPath[row.key(in: section.id)] = ItemPath(section: n, item: r)
            }
        }
        var itemDeletes: [ItemPath] = []
        var itemMoves: [Move<ItemPath>] = []
        var itemUpdates: [ItemPath] = []
        var movedAndUpdatedItems: [ItemPath] = []
        var oldRowKeys = Set<RowKey<Item.ID>>()
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
            let stayingRows = longestIncreasingSubsequence(candidates.map(\.newRow))
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
        var deletedSectionRowKeys = Set<RowKey<Item.ID>>()
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
            sectionDeletes: sectionDeletes, sectionInserts: sectionInserts, sectionMoves: sectionMoves,
            sectionUpdates: sectionUpdates, movedAndUpdatedSections: movedAndUpdatedSections,
            itemDeletes: itemDeletes, itemInserts: itemInserts, itemMoves: itemMoves,
            itemUpdates: itemUpdates, movedAndUpdatedItems: movedAndUpdatedItems
        )
    }
}

/// The positions (in `values`) of one longest strictly increasing subsequence of `values`.
/// O(n log n) (patience sorting).
func longestIncreasingSubsequence(_ values: [Int]) -> Set<Int> {
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
