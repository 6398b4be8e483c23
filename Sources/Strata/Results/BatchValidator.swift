/// Simulates the consistency checks `UITableView`/`UICollectionView` run on
/// `performBatchUpdates`, on any platform, and reports the first violation precisely.
///
/// Strata's own batches always pass; the validator exists so that tests (Strata's and
/// yours, for batches you build or transform) can prove it.
///
/// ```swift
/// try BatchValidator.validate(batch, oldCounts: old.rowCounts, newCounts: new.rowCounts)
/// ```
public enum BatchValidator {
    /// Checks `batch` against the row counts of every section before (`oldCounts`) and
    /// after (`newCounts`) the update.
    public static func validate(_ batch: ChangeBatch, oldCounts: [Int], newCounts: [Int]) throws(BatchValidationError) {
        _ = try plan(batch, oldCounts: oldCounts, newCounts: newCounts)
    }

    /// Checks `batch` as a change from `old` to `new` (row counts only).
    public static func validate<Item, Section>(
        _ batch: ChangeBatch, from old: ResultsSnapshot<Item, Section>, to new: ResultsSnapshot<Item, Section>
    ) throws(BatchValidationError) {
        try validate(batch, oldCounts: old.rowCounts, newCounts: new.rowCounts)
    }

    /// Where every section and row of the new state comes from, as UIKit computes it.
    struct Plan {
        enum Origin: Equatable {
            case inserted
            case old(Int)
        }
        /// Per new section: inserted, or the old section it continues.
        var sections: [Origin]
        /// Per new section: per row, inserted, or the old path it continues (`.old` encodes
        /// the old section in `oldSections`).
        var rows: [[RowOrigin]]

        enum RowOrigin: Equatable {
            case inserted
            case old(ItemPath)
        }
    }

    static func plan(_ batch: ChangeBatch, oldCounts: [Int], newCounts: [Int]) throws(BatchValidationError) -> Plan {
        let oldSectionCount = oldCounts.count
        let newSectionCount = newCounts.count

        // Sections: ranges and duplicates.
        var oldUse = [BatchOperation?](repeating: nil, count: oldSectionCount)
        var newUse = [BatchOperation?](repeating: nil, count: newSectionCount)
        func claimOld(_ index: Int, _ operation: BatchOperation) throws(BatchValidationError) {
            guard index >= 0 && index < oldSectionCount else {
                throw .sectionOutOfRange(operation, section: index, count: oldSectionCount)
            }
            if let previous = oldUse[index] {
                throw previous == operation
                    ? .duplicateSection(operation, section: index)
                    : .conflictingSectionOperations(previous, operation, section: index)
            }
            oldUse[index] = operation
        }
        func claimNew(_ index: Int, _ operation: BatchOperation) throws(BatchValidationError) {
            guard index >= 0 && index < newSectionCount else {
                throw .sectionOutOfRange(operation, section: index, count: newSectionCount)
            }
            if let previous = newUse[index] {
                throw previous == operation
                    ? .duplicateSection(operation, section: index)
                    : .conflictingSectionOperations(previous, operation, section: index)
            }
            newUse[index] = operation
        }
        for s in batch.sectionDeletes { try claimOld(s, .delete) }
        for s in batch.sectionUpdates { try claimOld(s, .update) }
        for move in batch.sectionMoves { try claimOld(move.from, .moveFrom) }
        for s in batch.sectionInserts { try claimNew(s, .insert) }
        for move in batch.sectionMoves { try claimNew(move.to, .moveTo) }
        var updatedAfterMove = Set<Int>()
        for s in batch.movedAndUpdatedSections {
            guard s >= 0 && s < newSectionCount else {
                throw .sectionOutOfRange(.movedAndUpdated, section: s, count: newSectionCount)
            }
            guard updatedAfterMove.insert(s).inserted else { throw .duplicateSection(.movedAndUpdated, section: s) }
            guard newUse[s] == .moveTo else { throw .movedAndUpdatedSectionNotMoved(section: s) }
        }
        let expectedSections = oldSectionCount - batch.sectionDeletes.count + batch.sectionInserts.count
        guard expectedSections == newSectionCount else {
            throw .invalidNumberOfSections(
                old: oldSectionCount, new: newSectionCount, inserted: batch.sectionInserts.count,
                deleted: batch.sectionDeletes.count)
        }

        // Section origins: explicit targets first, then the remaining old sections in order.
        var sectionOrigin = [Plan.Origin?](repeating: nil, count: newSectionCount)
        for s in batch.sectionInserts { sectionOrigin[s] = .inserted }
        for move in batch.sectionMoves { sectionOrigin[move.to] = .old(move.from) }
        var oldToNew = [Int?](repeating: nil, count: oldSectionCount)
        for move in batch.sectionMoves { oldToNew[move.from] = move.to }
        var nextOld = 0
        for n in 0..<newSectionCount where sectionOrigin[n] == nil {
            while oldUse[nextOld] == .delete || oldUse[nextOld] == .moveFrom { nextOld += 1 }
            sectionOrigin[n] = .old(nextOld)
            oldToNew[nextOld] = n
            nextOld += 1
        }
        let origins = sectionOrigin.map { $0! }
        let deletedOld = Set(batch.sectionDeletes)
        let insertedNew = Set(batch.sectionInserts)

        // Rows: ranges, sections, duplicates and conflicts.
        var oldRowUse: [ItemPath: BatchOperation] = [:]
        var newRowUse: [ItemPath: BatchOperation] = [:]
        func checkOld(_ path: ItemPath, _ operation: BatchOperation) throws(BatchValidationError) {
            guard path.section >= 0 && path.section < oldSectionCount else {
                throw .sectionOutOfRange(operation, section: path.section, count: oldSectionCount)
            }
            guard !deletedOld.contains(path.section) else { throw .itemInDeletedSection(operation, path: path) }
            guard path.item >= 0 && path.item < oldCounts[path.section] else {
                throw .itemOutOfRange(operation, path: path, count: oldCounts[path.section])
            }
            if let previous = oldRowUse[path] {
                throw previous == operation
                    ? .duplicateItem(operation, path: path)
                    : .conflictingItemOperations(previous, operation, path: path)
            }
            oldRowUse[path] = operation
        }
        func checkNew(_ path: ItemPath, _ operation: BatchOperation) throws(BatchValidationError) {
            guard path.section >= 0 && path.section < newSectionCount else {
                throw .sectionOutOfRange(operation, section: path.section, count: newSectionCount)
            }
            guard !insertedNew.contains(path.section) else { throw .itemInInsertedSection(operation, path: path) }
            guard path.item >= 0 && path.item < newCounts[path.section] else {
                throw .itemOutOfRange(operation, path: path, count: newCounts[path.section])
            }
            if let previous = newRowUse[path] {
                throw previous == operation
                    ? .duplicateItem(operation, path: path)
                    : .conflictingItemOperations(previous, operation, path: path)
            }
            newRowUse[path] = operation
        }
        for path in batch.itemDeletes { try checkOld(path, .delete) }
        for path in batch.itemUpdates { try checkOld(path, .update) }
        for move in batch.itemMoves { try checkOld(move.from, .moveFrom) }
        for path in batch.itemInserts { try checkNew(path, .insert) }
        for move in batch.itemMoves { try checkNew(move.to, .moveTo) }
        var rowsUpdatedAfterMove = Set<ItemPath>()
        for path in batch.movedAndUpdatedItems {
            guard rowsUpdatedAfterMove.insert(path).inserted else { throw .duplicateItem(.movedAndUpdated, path: path) }
            guard newRowUse[path] == .moveTo else { throw .movedAndUpdatedItemNotMoved(path: path) }
        }

        // Per-section counts.
        var deletesIn = [Int](repeating: 0, count: oldSectionCount)
        var movesOut = [Int](repeating: 0, count: oldSectionCount)
        var insertsIn = [Int](repeating: 0, count: newSectionCount)
        var movesIn = [Int](repeating: 0, count: newSectionCount)
        for path in batch.itemDeletes { deletesIn[path.section] += 1 }
        for path in batch.itemInserts { insertsIn[path.section] += 1 }
        for move in batch.itemMoves {
            movesOut[move.from.section] += 1
            movesIn[move.to.section] += 1
        }
        var rows: [[Plan.RowOrigin]] = []
        rows.reserveCapacity(newSectionCount)
        var explicitTargets: [ItemPath: Plan.RowOrigin] = [:]
        for path in batch.itemInserts { explicitTargets[path] = .inserted }
        for move in batch.itemMoves { explicitTargets[move.to] = .old(move.from) }
        for n in 0..<newSectionCount {
            guard case .old(let o) = origins[n] else {
                rows.append([Plan.RowOrigin](repeating: .inserted, count: newCounts[n]))
                continue
            }
            let expected = oldCounts[o] - deletesIn[o] - movesOut[o] + insertsIn[n] + movesIn[n]
            guard expected == newCounts[n] else {
                throw .invalidNumberOfItems(
                    section: n, oldSection: o, old: oldCounts[o], new: newCounts[n], inserted: insertsIn[n],
                    deleted: deletesIn[o], movedIn: movesIn[n], movedOut: movesOut[o])
            }
            var sectionRows: [Plan.RowOrigin] = []
            sectionRows.reserveCapacity(newCounts[n])
            var nextOldRow = 0
            for r in 0..<newCounts[n] {
                if let origin = explicitTargets[ItemPath(section: n, item: r)] {
                    sectionRows.append(origin)
                    continue
                }
                while true {
                    let use = oldRowUse[ItemPath(section: o, item: nextOldRow)]
                    if use == .delete || use == .moveFrom { nextOldRow += 1 } else { break }
                }
                sectionRows.append(.old(ItemPath(section: o, item: nextOldRow)))
                nextOldRow += 1
            }
            rows.append(sectionRows)
        }
        return Plan(sections: origins, rows: rows)
    }
}

/// An operation of a ``ChangeBatch``, as named in ``BatchValidationError``.
public enum BatchOperation: String, Hashable, Sendable {
    /// A section or row delete (old index space).
    case delete
    /// A section or row insert (new index space).
    case insert
    /// A section or row update (old index space).
    case update
    /// The source of a move (old index space).
    case moveFrom = "move from"
    /// The target of a move (new index space).
    case moveTo = "move to"
    /// An entry of ``ChangeBatch/movedAndUpdatedSections`` or ``ChangeBatch/movedAndUpdatedItems``.
    case movedAndUpdated = "moved and updated"
}

/// Why ``BatchValidator`` rejected a batch. The descriptions follow UIKit's exception
/// messages where UIKit has one.
public enum BatchValidationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A section index outside the old (delete, update, move from) or new (insert, move to) range.
    case sectionOutOfRange(BatchOperation, section: Int, count: Int)
    /// The same section twice in one list.
    case duplicateSection(BatchOperation, section: Int)
    /// Two operations on one section in the same index space (delete and move, insert and move target, ...).
    case conflictingSectionOperations(BatchOperation, BatchOperation, section: Int)
    /// A section listed as moved and updated that is not a move target.
    case movedAndUpdatedSectionNotMoved(section: Int)
    /// The number of sections does not balance.
    case invalidNumberOfSections(old: Int, new: Int, inserted: Int, deleted: Int)
    /// A row index outside its section.
    case itemOutOfRange(BatchOperation, path: ItemPath, count: Int)
    /// A row operation in a section the batch deletes.
    case itemInDeletedSection(BatchOperation, path: ItemPath)
    /// A row operation in a section the batch inserts.
    case itemInInsertedSection(BatchOperation, path: ItemPath)
    /// The same path twice in one list.
    case duplicateItem(BatchOperation, path: ItemPath)
    /// Two operations on one path in the same index space (delete and move, move and update, ...).
    case conflictingItemOperations(BatchOperation, BatchOperation, path: ItemPath)
    /// A row listed as moved and updated that is not a move target.
    case movedAndUpdatedItemNotMoved(path: ItemPath)
    /// UIKit's "invalid number of rows in section".
    case invalidNumberOfItems(
        section: Int, oldSection: Int, old: Int, new: Int, inserted: Int, deleted: Int, movedIn: Int, movedOut: Int)

    /// A message in UIKit's words.
    public var description: String {
        switch self {
        case .sectionOutOfRange(let op, let section, let count):
            "attempt to \(op.rawValue) section \(section), but there are only \(count) sections"
        case .duplicateSection(let op, let section):
            "attempt to \(op.rawValue) section \(section) twice"
        case .conflictingSectionOperations(let a, let b, let section):
            "attempt to perform a \(a.rawValue) and a \(b.rawValue) on section \(section)"
        case .movedAndUpdatedSectionNotMoved(let section):
            "section \(section) is listed as moved and updated but is not the target of a move"
        case .invalidNumberOfSections(let old, let new, let inserted, let deleted):
            "invalid number of sections. The number of sections contained after the update (\(new)) must be "
                + "equal to the number of sections contained before the update (\(old)), plus or minus the number "
                + "of sections inserted or deleted (\(inserted) inserted, \(deleted) deleted)"
        case .itemOutOfRange(let op, let path, let count):
            "attempt to \(op.rawValue) row \(path.item) in section \(path.section), which only contains \(count) rows"
        case .itemInDeletedSection(let op, let path):
            "attempt to \(op.rawValue) row \(path) in section \(path.section), which is being deleted"
        case .itemInInsertedSection(let op, let path):
            "attempt to \(op.rawValue) row \(path) in section \(path.section), which is being inserted"
        case .duplicateItem(let op, let path):
            "attempt to \(op.rawValue) row \(path) twice"
        case .conflictingItemOperations(let a, let b, let path):
            "attempt to perform a \(a.rawValue) and a \(b.rawValue) for the same index path \(path)"
        case .movedAndUpdatedItemNotMoved(let path):
            "row \(path) is listed as moved and updated but is not the target of a move"
        case .invalidNumberOfItems(let section, let oldSection, let old, let new, let inserted, let deleted, let movedIn, let movedOut):
            "invalid number of rows in section \(section). The number of rows contained in an existing section "
                + "after the update (\(new)) must be equal to the number of rows contained in that section before "
                + "the update (\(old), old section \(oldSection)), plus or minus the number of rows inserted or "
                + "deleted from that section (\(inserted) inserted, \(deleted) deleted) and plus or minus the number "
                + "of rows moved into or out of that section (\(movedIn) moved in, \(movedOut) moved out)"
        }
    }
}
