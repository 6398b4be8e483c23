import GRDB

/// The write of a user's move (``ResultsController/moveItem(from:to:)-(ItemPath,_)``): what
/// the delivered snapshot says (the item, its new parent, the rows it was dropped between)
/// turned into one change of positions, checked against the store's state in the edit's
/// write transaction. Refuses with ``ResultsEditError`` what it cannot represent.
struct MoveWrite<Item: StrataEntity, Section: Hashable & Sendable> {
    /// The request's order as a move reads it.
    let ordering: OrderedRequest
    /// The moved item, as the list shows it.
    let item: Item
    /// The destination section's object when the sections follow the parent; nil: the item
    /// keeps its parent.
    let newParent: Int64?
    /// The section the item was dropped in.
    let destinationSection: SectionID
    /// The rows the item was dropped between, by id (nil: an end of the section).
    let previous: Int64?
    let next: Int64?

    /// Writes the move; returns the item as the write left it.
    func write(_ db: Database, fetcher: ResultsFetcher<Item, Section>) throws -> Item {
        let itemID = item.objectID.rawValue
        let storage = ordering.storage
        let t = quoted(storage.table), fk = quoted(storage.foreignKey), k = quoted(storage.key)
        guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT \(fk) FROM \(t) WHERE \(k) = ?"), arguments: [itemID])
        else { throw ResultsEditError.itemDeleted }
        let currentParent: Int64? = row[0]
        let parent: Int64
        if let newParent {
            guard try Bool.fetchOne(
                db.cachedStatement(sql: "SELECT 1 FROM \(quoted(ordering.parentEntity)) WHERE \(quoted(ordering.parentKey)) = ?"), arguments: [newParent]) == true
            else { throw ResultsEditError.sectionDeleted(destinationSection) }
            parent = newParent
        } else {
            guard let currentParent else { throw ResultsEditError.noParent(destinationSection) }
            parent = currentParent
        }
        func isChild(_ id: Int64?) throws -> Bool {
            guard let id, id != itemID else { return false }
            return try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM \(t) WHERE \(k) = ? AND \(fk) = ?"), arguments: [id, parent]) == true
        }
        func exist(_ ids: [Int64]) throws -> Bool {
            for id in ids where try Row.fetchOne(db, sql: "SELECT 1 FROM \(t) WHERE \(k) = ?", arguments: [id]) == nil {
                return false
            }
            return true
        }
        if ordering.parentsMayInterleave {
            let itemKeys = try fetcher.sortKeys(db, of: itemID)
            if try fetcher.hasItemOfAnotherParent(
                db, foreignKey: storage.foreignKey, parent: parent, prefix: itemKeys[..<ordering.positionIndex])
            {
                // Other parents' rows sort among this parent's children: the item's
                // position alone places it, in the request's order, or the move is refused.
                func row(_ id: Int64?) throws -> InterleavedPlacement.Row? {
                    guard let id else { return nil }
                    do {
                        return InterleavedPlacement.Row(id: id, keys: try fetcher.sortKeys(db, of: id))
                    } catch ResultsError.itemUnavailable {
                        return nil
                    }
                }
                let before = try row(previous), after = try row(next)
                if (previous != nil || next != nil) && before == nil && after == nil {
                    throw ResultsEditError.destinationChanged
                }
                guard let range = InterleavedPlacement.positions(
                    of: InterleavedPlacement.Row(id: itemID, keys: itemKeys), after: before, before: after,
                    positionIndex: ordering.positionIndex, descending: fetcher.plan.itemDescending)
                else { throw ResultsEditError.mixedParents }
                let current = try Int64?.fetchOne(
                    db, sql: "SELECT \(quoted(storage.position)) FROM \(t) WHERE \(k) = ?", arguments: [itemID]
                ) ?? nil
                let position = InterleavedPlacement.position(in: range, current: current)
                if position != current {
                    try db.execute(
                        sql: "UPDATE \(t) SET \(quoted(storage.position)) = ? WHERE \(k) = ?",
                        arguments: [position, itemID])
                }
                guard let fresh = try db.fetchOne(Item.self, id: item.objectID) else { throw ResultsEditError.itemDeleted }
                return fresh
            }
        }
        if !ordering.siblingsInStorageOrder {
            // The list orders siblings otherwise than the store: placed in the list's order.
            let previousIsChild = try isChild(previous), nextIsChild = try isChild(next)
            if !previousIsChild && !nextIsChild && (previous != nil || next != nil) {
                if newParent == nil, try exist([previous, next].compactMap { $0 }) { throw ResultsEditError.mixedParents }
                throw ResultsEditError.destinationChanged
            }
            func neighbour(_ id: Int64?, isChild: Bool) -> SiblingPlacement.Neighbour {
                guard let id else { return .none }
                return isChild ? .child(id) : .gone
            }
            try SiblingPlacement.place(
                itemID, parent: parent, after: neighbour(previous, isChild: previousIsChild),
                before: neighbour(next, isChild: nextIsChild), storage: storage, positionIndex: ordering.positionIndex,
                fetcher: fetcher, db)
            guard let fresh = try db.fetchOne(Item.self, id: item.objectID) else { throw ResultsEditError.itemDeleted }
            return fresh
        }
        // The list shows siblings in the store's order: placed among them.
        let placement: OrderedPositions.Placement
        if try isChild(previous) {
            placement = .after(previous!)
        } else if try isChild(next) {
            placement = .before(next!)
        } else if previous == nil && next == nil {
            placement = .end
        } else if newParent == nil, try exist([previous, next].compactMap { $0 }) {
            // Neighbours that exist but under other parents: a list of several parents.
            throw ResultsEditError.mixedParents
        } else {
            throw ResultsEditError.destinationChanged
        }
        _ = try OrderedPositions.place(itemID, parent: parent, at: placement, storage, db)
        guard let fresh = try db.fetchOne(Item.self, id: item.objectID) else { throw ResultsEditError.itemDeleted }
        return fresh
    }
}
