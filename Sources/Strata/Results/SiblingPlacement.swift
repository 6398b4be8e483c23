import GRDB

/// Where a user's drop puts an item among its parent's children when the request orders
/// them otherwise than the store does: by the position descending (`sort: [-list.@position]`,
/// where siblings of equal position still follow each other by increasing id, so the list is
/// not the store's order reversed), or with sort keys after the position (`[list.@position,
/// title]`, which order siblings of equal position by title).
///
/// The store's placement (`OrderedPositions.place`, "right after this sibling, in the order
/// of (position, id)") would then put the item where the list does not show it, or take a
/// drop between siblings of equal position as already satisfied, and its rebalance would
/// renumber them in the store's order, swapping rows the list shows. So the item's position
/// is chosen in the request's own order: the positions that sort it after the row it was
/// dropped after and before the row it was dropped before form a range
/// (``InterleavedPlacement/positions(of:after:before:positionIndex:descending:)``); the item
/// keeps its position when it is in the range already, and takes the middle otherwise. When
/// the range is empty (the two rows share a position, or have no integer left between them),
/// a local rebalance renumbers the smallest window of siblings around the drop that has room,
/// in the order the request shows them, and the item takes a position in the room it made;
/// siblings without a position (raw SQL) make the whole list renumbered first, in that order
/// too. Rows of other parents never sort among the siblings here (the caller checked), so
/// renumbering the siblings moves no row the list shows. (`ResultsController.moveItem`,
/// Docs/Decisions.md)
enum SiblingPlacement {
    /// A row next to the drop, in the list's order.
    enum Neighbour: Equatable {
        /// No row there: the drop is at that end of the list.
        case none
        /// A child of the destination's parent.
        case child(Int64)
        /// A row that is no longer a child of the destination's parent (another writer
        /// moved it): the item goes next to the other neighbour.
        case gone
    }

    /// A sibling in the list's order: its id, its sort keys and its position.
    private struct Child {
        var id: Int64
        var keys: [DatabaseValue]
        var position: Int64?
    }

    /// Gives `item` the parent `parent` and a position that sorts it, in the request's order
    /// of `fetcher`, after `previous` and before `next`, renumbering siblings when needed.
    /// At least one neighbour is a child, or both are `.none`.
    static func place<Item, Section>(
        _ item: Int64, parent: Int64, after previous: Neighbour, before next: Neighbour,
        storage: OrderedPositions.Storage, positionIndex: Int, fetcher: ResultsFetcher<Item, Section>, _ db: Database
    ) throws {
        let t = quoted(storage.table), fk = quoted(storage.foreignKey), pos = quoted(storage.position)
        let k = quoted(storage.key)
        let descending = fetcher.plan.itemDescending
        let positionDescends = positionIndex < descending.count && descending[positionIndex]
        guard let current = try Row.fetchOne(db.cachedStatement(sql: "SELECT \(fk), \(pos) FROM \(t) WHERE \(k) = ?"), arguments: [item])
        else { throw ResultsEditError.itemDeleted }
        // Into another parent first, so that the item's sort keys are those of its new
        // siblings. Not with its old position: the parent trigger would take the write for a
        // raw re-parenting and put it last (harmless when it had none: it is placed below).
        if (current[0] as Int64?) != parent {
            try db.execute(sql: "UPDATE \(t) SET \(fk) = ?, \(pos) = NULL WHERE \(k) = ?", arguments: [parent, item])
        }
        let update = try db.cachedStatement(sql: "UPDATE \(t) SET \(pos) = ? WHERE \(k) = ?")

        // The siblings in the request's order, read only when a rebalance or a neighbour
        // that is gone needs them.
        func siblings() throws -> [Child] {
            try fetcher.childrenSortKeys(db, foreignKey: storage.foreignKey, parent: parent, excluding: item)
                .map { Child(id: $0.id, keys: $0.keys, position: Int64.fromDatabaseValue($0.keys[positionIndex])) }
                .sorted { DatabaseValueOrdering.compare($0.keys, id: $0.id, $1.keys, id: $1.id, descending: descending) < 0 }
        }
        // A sibling without a position sorts first (last when the position descends): number
        // them all, in the order the list shows them.
        if try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT 1 FROM \(t) WHERE \(fk) = ? AND \(pos) IS NULL AND \(k) IS NOT ? LIMIT 1"),
            arguments: [parent, item]) == true
        {
            let all = try siblings()
            for (index, child) in all.enumerated() {
                let rank = Int64(positionDescends ? all.count - index : index + 1)
                try update.execute(arguments: [rank * OrderedPositions.gap, child.id])
            }
        }

        func row(_ id: Int64?) throws -> InterleavedPlacement.Row? {
            guard let id else { return nil }
            return InterleavedPlacement.Row(id: id, keys: try fetcher.sortKeys(db, of: id))
        }
        func order(_ a: InterleavedPlacement.Row, _ b: InterleavedPlacement.Row) -> Int {
            DatabaseValueOrdering.compare(a.keys, id: a.id, b.keys, id: b.id, descending: descending)
        }
        // The rows the item goes between: the neighbours that are still children; next to
        // one of them alone, the sibling that now follows (or precedes) it.
        func bounds() throws -> (InterleavedPlacement.Row?, InterleavedPlacement.Row?) {
            var before: InterleavedPlacement.Row? = nil, after: InterleavedPlacement.Row? = nil
            if case .child(let id) = previous { before = try row(id) }
            if case .child(let id) = next { after = try row(id) }
            var nextIsOpen = next == .none
            if let b = before, let a = after, order(b, a) > 0 {
                // Reordered by another writer: right after the row above.
                after = nil
                nextIsOpen = false
            }
            switch (before, after) {
            case (let b?, nil) where !nextIsOpen:
                let all = try siblings()
                if let index = all.firstIndex(where: { $0.id == b.id }), index + 1 < all.count {
                    after = InterleavedPlacement.Row(id: all[index + 1].id, keys: all[index + 1].keys)
                }
            case (nil, let a?) where previous == .gone:
                let all = try siblings()
                if let index = all.firstIndex(where: { $0.id == a.id }), index > 0 {
                    before = InterleavedPlacement.Row(id: all[index - 1].id, keys: all[index - 1].keys)
                }
            case (nil, nil):
                // A drop into a list that shows none of the siblings: last.
                before = try siblings().last.map { InterleavedPlacement.Row(id: $0.id, keys: $0.keys) }
            default:
                break
            }
            return (before, after)
        }

        var (before, after) = try bounds()
        func range() throws -> ClosedRange<Int64>? {
            InterleavedPlacement.positions(
                of: InterleavedPlacement.Row(id: item, keys: try fetcher.sortKeys(db, of: item)), after: before, before: after,
                positionIndex: positionIndex, descending: descending)
        }
        var found = try range()
        if found == nil {
            try rebalance(try siblings(), between: before?.id, after?.id, descending: positionDescends, update)
            if let b = before { before = try row(b.id) }
            if let a = after { after = try row(a.id) }
            found = try range()
        }
        guard let found else { throw OrderError.noRoom(entity: storage.table, parent: parent) }
        let position = try Int64?.fetchOne(db.cachedStatement(sql: "SELECT \(pos) FROM \(t) WHERE \(k) = ?"), arguments: [item]) ?? nil
        let new = InterleavedPlacement.position(in: found, current: position)
        if new != position { try update.execute(arguments: [new, item]) }
    }

    /// Spreads the smallest window of `siblings` (in the list's order, with positions) around
    /// the place right after `previous` (before `next` when there is none) that has room,
    /// evenly over the positions its outer neighbours leave, leaving a slot at the place:
    /// doubling from 8 siblings on each side, as `OrderedPositions` does in the store's order.
    private static func rebalance(
        _ siblings: [Child], between previous: Int64?, _ next: Int64?, descending: Bool, _ update: Statement
    ) throws {
        // Positions as coordinates that increase down the list, over unsigned integers.
        func coordinate(_ position: Int64) -> UInt64 {
            UInt64(bitPattern: descending ? ~position : position) ^ (1 << 63)
        }
        func position(_ coordinate: UInt64) -> Int64 {
            let value = Int64(bitPattern: coordinate ^ (1 << 63))
            return descending ? ~value : value
        }
        let split: Int
        if let previous, let index = siblings.firstIndex(where: { $0.id == previous }) {
            split = index + 1
        } else if let next, let index = siblings.firstIndex(where: { $0.id == next }) {
            split = index
        } else {
            return
        }
        let gap = UInt64(OrderedPositions.gap)
        var width = 8
        while true {
            let start = max(0, split - width), end = min(siblings.count, split + width)
            let window = siblings[start..<end]
            let slots = UInt64(window.count + 2)
            let exhausted = start == 0 && end == siblings.count
            let margin = gap.multipliedReportingOverflow(by: slots)
            let low = start > 0
                ? coordinate(siblings[start - 1].position ?? 0)
                : (window.first.map { coordinate($0.position ?? 0) } ?? (1 << 63)).subtractingSaturating(margin)
            let high = end < siblings.count
                ? coordinate(siblings[end].position ?? 0)
                : (window.last.map { coordinate($0.position ?? 0) } ?? (1 << 63)).addingSaturating(margin)
            if exhausted || (high > low && (high - low) / slots >= UInt64(OrderedPositions.minimumSpacing)) {
                guard high > low, (high - low) / slots >= 2 else { return }  // no room: the caller refuses
                let spacing = min(gap, (high - low) / slots)
                var next = low
                for (offset, sibling) in window.enumerated() {
                    next += spacing
                    if start + offset == split { next += spacing }  // the item's slot
                    let new = position(next)
                    if sibling.position != new { try update.execute(arguments: [new, sibling.id]) }
                }
                return
            }
            width *= 2
        }
    }
}

private extension UInt64 {
    func subtractingSaturating(_ other: (partialValue: UInt64, overflow: Bool)) -> UInt64 {
        other.overflow || other.partialValue > self ? 0 : self - other.partialValue
    }

    func addingSaturating(_ other: (partialValue: UInt64, overflow: Bool)) -> UInt64 {
        let (sum, overflow) = addingReportingOverflow(other.partialValue)
        return other.overflow || overflow ? .max : sum
    }
}
