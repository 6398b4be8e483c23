import Strata
import Testing

/// An independent model of how UIKit carries out `performBatchUpdates`, written the way its
/// documentation describes it rather than the way ``ChangeBatch/apply(to:reading:)`` (and
/// the validator's plan it shares) computes it: remove deleted and moved-out rows from the
/// old sections (descending old paths), remove deleted and moved sections (descending old
/// indexes), insert inserted and moved sections (ascending new indexes), then insert
/// inserted and moved-in rows (ascending new paths). Updated rows and sections take their
/// new values from `new`. Returns nil when a step is impossible (an index out of range),
/// or when the result does not have `new`'s shape.
///
/// Tests compare it with `apply`, so a bug in the shared plan cannot hide a bad batch.
func uikitReplay<Item, Section>(
    _ batch: ChangeBatch, from old: ResultsSnapshot<Item, Section>, to new: ResultsSnapshot<Item, Section>
) -> ResultsSnapshot<Item, Section>? {
    typealias Origin = ReplayOrigin
    typealias Slot = ReplaySlot<Item, Section>
    var slots: [Slot] = old.sections.enumerated().map { index, section in
        Slot(
            section: section, oldIndex: index,
            rows: section.rows.enumerated().map { (row, element) in (element, .old(ItemPath(section: index, item: row))) })
    }
    // 1. Rows out, in the old index space (descending, so earlier indexes stay valid).
    var movedRows: [ItemPath: (ResultsRow<Item>?, Origin)] = [:]
    let rowsOut = batch.itemDeletes.map { ($0, false) } + batch.itemMoves.map { ($0.from, true) }
    for (path, isMove) in rowsOut.sorted(by: { $0.0 > $1.0 }) {
        guard path.section < slots.count, path.item < slots[path.section].rows.count else { return nil }
        let removed = slots[path.section].rows.remove(at: path.item)
        if isMove { movedRows[path] = removed }
    }
    // 2. Sections out (old index space, descending).
    var movedSections: [Int: Slot] = [:]
    let sectionsOut = batch.sectionDeletes.map { ($0, false) } + batch.sectionMoves.map { ($0.from, true) }
    for (index, isMove) in sectionsOut.sorted(by: { $0.0 > $1.0 }) {
        guard index < slots.count else { return nil }
        let removed = slots.remove(at: index)
        if isMove { movedSections[index] = removed }
    }
    // 3. Sections in (new index space, ascending).
    let sectionsIn: [(Int, Slot)] =
        batch.sectionInserts.map { ($0, Slot(section: nil, oldIndex: nil, rows: [])) }
        + batch.sectionMoves.map { ($0.to, movedSections[$0.from]!) }
    for (index, slot) in sectionsIn.sorted(by: { $0.0 < $1.0 }) {
        guard index <= slots.count else { return nil }
        slots.insert(slot, at: index)
    }
    guard slots.count == new.sections.count else { return nil }
    // 4. Rows in (new index space, ascending).
    let rowsIn: [(ItemPath, (ResultsRow<Item>?, Origin))] =
        batch.itemInserts.map { ($0, (nil, .inserted)) } + batch.itemMoves.map { ($0.to, movedRows[$0.from]!) }
    for (path, row) in rowsIn.sorted(by: { $0.0 < $1.0 }) {
        guard path.section < slots.count, path.item <= slots[path.section].rows.count else { return nil }
        slots[path.section].rows.insert(row, at: path.item)
    }
    // Values: inserted sections and rows, and updated ones, from `new`.
    let updatedRows = Set(batch.itemUpdates.map { Origin.old($0) })
    let movedAndUpdated = Set(batch.movedAndUpdatedItems)
    let updatedSections = Set(batch.sectionUpdates), movedAndUpdatedSections = Set(batch.movedAndUpdatedSections)
    var sections: [ResultsSection<Item, Section>] = []
    for (n, slot) in slots.enumerated() {
        let fresh = new.sections[n]
        guard let section = slot.section else {
            guard slot.rows.isEmpty else { return nil }
            sections.append(fresh)
            continue
        }
        guard slot.rows.count == fresh.rows.count else { return nil }
        var rows: [ResultsRow<Item>] = []
        for (r, (row, origin)) in slot.rows.enumerated() {
            let reload = row == nil || updatedRows.contains(origin) || movedAndUpdated.contains(ItemPath(section: n, item: r))
            rows.append(reload ? fresh.rows[r] : row!)
        }
        let value =
            updatedSections.contains(slot.oldIndex!) || movedAndUpdatedSections.contains(n) ? fresh.value : section.value
        sections.append(ResultsSection(id: section.id, value: value, rows: rows))
    }
    return ResultsSnapshot(sections: sections)
}

enum ReplayOrigin: Hashable {
    case old(ItemPath)
    case inserted
}

struct ReplaySlot<Item: ResultsItem, Section: Hashable & Sendable> {
    var section: ResultsSection<Item, Section>?  // nil for an inserted section
    var oldIndex: Int?
    var rows: [(ResultsRow<Item>?, ReplayOrigin)]
}

/// Replays the batches a controller delivered after `shown`: each must pass the validator
/// and replay exactly, with ``ChangeBatch/apply(to:reading:)`` and with ``uikitReplay``.
/// `shown` follows them. Records an issue (with `context`) and returns false at the first
/// reload or bad batch.
func replayBatches<Item, Section>(
    _ updates: ArraySlice<ResultsUpdate<Item, Section>>, on shown: inout ResultsSnapshot<Item, Section>,
    _ context: String
) -> Bool {
    for update in updates {
        guard case .batch(let batch, let snapshot) = update else {
            Issue.record("unexpected reload \(context)")
            return false
        }
        do {
            try BatchValidator.validate(batch, from: shown, to: snapshot)
            let replayed = try batch.apply(to: shown, reading: snapshot)
            guard replayed == snapshot, uikitReplay(batch, from: shown, to: snapshot) == snapshot else {
                Issue.record("replay differs \(context)\nbatch: \(batch)")
                return false
            }
        } catch {
            Issue.record("\(error) \(context)\nbatch: \(batch)")
            return false
        }
        shown = snapshot
    }
    return true
}
