import Dispatch
import Foundation
import GRDB

/// Why ``ResultsController/moveItem(from:to:)-(ItemPath,_)`` or ``ResultsController/deleteItem(at:)-(ItemPath)``
/// refused an edit. Nothing was written and nothing delivered: a list view that already
/// moved the row must put it back (reload the rows from ``ResultsController/snapshot``).
public enum ResultsEditError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The request is not ordered by an ordered relationship (`sort: [list.@position]`),
    /// or sort keys before the position are not values of the parent; `reason` says which.
    case notOrderedByPosition(reason: String)
    /// A path outside the snapshot the list shows (``ResultsController/snapshot``), or a
    /// destination past the last item of its section.
    case outsideList(ItemPath)
    /// The path is the group row of filtered items, which has no place of its own.
    case groupRow(ItemPath)
    /// A post-fetch comparator orders the rows, so a stored position cannot place one.
    case orderedByComparator
    /// Moving into another section would change the item's section key (keyed sections,
    /// or entity sections of another relationship than the ordered one).
    case sectionKeyWouldChange(from: SectionID, to: SectionID)
    /// The destination section holds the items without a parent, which have no stored order.
    case noParent(SectionID)
    /// The item was deleted (by another writer) since the list last showed it.
    case itemDeleted
    /// The destination section's object was deleted since the list last showed it.
    case sectionDeleted(SectionID)
    /// The rows the item was dropped between are no longer children of the destination's
    /// parent (another writer moved or deleted them), so its place is unknown.
    case destinationChanged
    /// The list mixes several parents' children (sorted by values of the parent, then the
    /// position), and no position of the item places it exactly between the rows it was
    /// dropped between: they belong to other parents, whose rows would have to be renumbered.
    case mixedParents

    /// The message.
    public var description: String {
        switch self {
        case .notOrderedByPosition(let reason): "the request cannot represent a move: \(reason)"
        case .outsideList(let path): "\(path) is outside the list"
        case .groupRow(let path): "\(path) is the group row of filtered items, which cannot move"
        case .orderedByComparator: "a post-fetch comparator orders the rows, so a move cannot be stored"
        case .sectionKeyWouldChange(let from, let to):
            "moving from section \(from) to \(to) would change the item's section key, which a move does not write"
        case .noParent(let id): "section \(id) holds the items without a parent, which have no stored order"
        case .itemDeleted: "the item was deleted since the list showed it"
        case .sectionDeleted(let id): "the object of section \(id) was deleted since the list showed it"
        case .destinationChanged: "the rows around the destination moved or were deleted since the list showed them"
        case .mixedParents: "the rows around the destination belong to other parents, and no position of the item fits between them"
        }
    }
}

// MARK: - Edits

extension ResultsController {
    /// Moves the row at `source` to `destination`, as a list view reports a drag
    /// (`tableView(_:moveRowAt:to:)`): `destination` is the row's path once it is removed
    /// from `source` and inserted there. Both are paths of ``snapshot``, the snapshot the
    /// list shows. Call it on the delivery queue.
    ///
    /// The request must be ordered by an ordered relationship (`sort: [list.@position]`,
    /// possibly after keys of the parent such as `list.name`). The move is one write
    /// transaction that gives the item a position between the items it was dropped between
    /// (`db.move(_:in:of:after:)`), by their ids: a move within a section keeps its
    /// parent; a move into another section of entity sections by the same relationship
    /// (`sections: { entity: list }`) makes that section's object the parent. The place is
    /// the one the request shows: in a list sorted by the position descending, or with sort
    /// keys after it, siblings of equal position are told apart as the request tells them
    /// (by id, or by those keys), and the siblings around the drop are renumbered in the
    /// request's order when no position of the item fits between the two rows.
    ///
    /// When rows of several parents sort among each other (`sort: [list.rank, list.@position]`
    /// without sections by the list, and lists of equal rank), the move writes the item's
    /// position only: one that sorts it, in the request's order, exactly between the rows it
    /// was dropped between. A drop that no such position represents is refused
    /// (``ResultsEditError/mixedParents``): the store's order after an accepted move is
    /// always the one the list shows.
    ///
    /// What is delivered (in ``DeliveryMode/batches``; in ``DeliveryMode/reloads``, a reload
    /// of the same snapshot): before the call returns, every consumer gets one batch with
    /// ``ChangeBatch/userEdit`` `== .move` holding exactly this move (from `source` to
    /// `destination`, listed in ``ChangeBatch/movedAndUpdatedItems`` too when the item's
    /// value changed, e.g. its parent), and ``snapshot`` is the snapshot with the row moved:
    /// what the list view already shows. A table view adapter takes that snapshot and
    /// animates nothing. Every later batch is relative to that snapshot: commits that were
    /// computed before the move but not yet delivered are folded into the next batch, and the
    /// move's own commit delivers nothing more when the store agrees with the list. When
    /// another writer already made the same move while the user dragged, nothing is written;
    /// the move is delivered all the same, and that writer's other changes come next.
    ///
    /// Throws ``ResultsEditError`` (nothing written, nothing delivered) when the request
    /// cannot represent the move, or when another writer deleted the item, the destination
    /// section's object or both rows the item was dropped between; the list view should then
    /// show ``snapshot`` again. A store error is rethrown as the store throws it.
    public func moveItem(from source: ItemPath, to destination: ItemPath) throws {
        dispatchPrecondition(condition: .onQueue(deliveryQueue))
        let old = snapshot
        let ordering = try editOrdering()
        guard source.section >= 0, source.section < old.numberOfSections, source.item >= 0,
              source.item < old.numberOfRows(inSection: source.section)
        else { throw ResultsEditError.outsideList(source) }
        // The moved row alone (a batched section that has not loaded its page reads one row).
        guard let item = try old.sections[source.section].rows.item(at: source.item, loadingPage: false) else {
            throw ResultsEditError.groupRow(source)
        }
        guard destination.section >= 0, destination.section < old.numberOfSections else {
            throw ResultsEditError.outsideList(destination)
        }
        if options.comparator != nil { throw ResultsEditError.orderedByComparator }
        let sourceSection = old.sections[source.section], targetSection = old.sections[destination.section]
        let sameSection = source.section == destination.section
        // The target's rows once the item left them (without copying them): row `i` of that
        // list is `targetSection.rows[original(i)]`.
        func original(_ index: Int) -> Int { sameSection && index >= source.item ? index + 1 : index }
        let targetCount = targetSection.rows.count - (sameSection ? 1 : 0)
        let itemRows = targetCount - (targetSection.rows.endsWithGroup ? 1 : 0)
        guard destination.item >= 0, destination.item <= itemRows else { throw ResultsEditError.outsideList(destination) }
        if source == destination { return }

        // The parent: the destination section's object, or the item's own parent.
        var newParent: Int64? = nil
        if source.section != destination.section {
            guard ordering.sectionsFollowParent else {
                throw ResultsEditError.sectionKeyWouldChange(from: sourceSection.id, to: targetSection.id)
            }
        }
        if ordering.sectionsFollowParent {
            guard case .object(let id) = targetSection.id else { throw ResultsEditError.noParent(targetSection.id) }
            newParent = id
        }
        // The neighbours in display order, as storage anchors: their ids only (batched rows
        // read no page for them).
        let previous = destination.item > 0 ? targetSection.rows.itemID(at: original(destination.item - 1)) : nil
        let next = destination.item < itemRows ? targetSection.rows.itemID(at: original(destination.item)) : nil

        let fetcher = fetcherForEdits
        var version = 0
        let moved: Item = try store.write { db in
            // Other connections' commits first: the state the controller computes before the
            // edit's commit is then the one the edit reads and writes.
            try store.observer.deliverExternalCommits(db)
            version = currentPublishedVersion
            hintEditedRow(item.objectID.rawValue, in: sourceSection.id, at: source.item)
            let storage = ordering.storage
            let t = quoted(storage.table), fk = quoted(storage.foreignKey), k = quoted(storage.key)
            guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT \(fk) FROM \(t) WHERE \(k) = ?"), arguments: [item.objectID.rawValue])
            else { throw ResultsEditError.itemDeleted }
            let currentParent: Int64? = row[0]
            let parent: Int64
            if let newParent {
                guard try Bool.fetchOne(
                    db.cachedStatement(sql: "SELECT 1 FROM \(quoted(ordering.parentEntity)) WHERE \(quoted(ordering.parentKey)) = ?"), arguments: [newParent]) == true
                else { throw ResultsEditError.sectionDeleted(targetSection.id) }
                parent = newParent
            } else {
                guard let currentParent else { throw ResultsEditError.noParent(targetSection.id) }
                parent = currentParent
            }
            func isChild(_ id: Int64?) throws -> Bool {
                guard let id, id != item.objectID.rawValue else { return false }
                return try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM \(t) WHERE \(k) = ? AND \(fk) = ?"), arguments: [id, parent]) == true
            }
            func exist(_ ids: [Int64]) throws -> Bool {
                for id in ids where try Row.fetchOne(db, sql: "SELECT 1 FROM \(t) WHERE \(k) = ?", arguments: [id]) == nil {
                    return false
                }
                return true
            }
            if ordering.parentsMayInterleave {
                let itemKeys = try fetcher.sortKeys(db, of: item.objectID.rawValue)
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
                        of: InterleavedPlacement.Row(id: item.objectID.rawValue, keys: itemKeys), after: before, before: after,
                        positionIndex: ordering.positionIndex, descending: fetcher.plan.itemDescending)
                    else { throw ResultsEditError.mixedParents }
                    let current = try Int64?.fetchOne(
                        db, sql: "SELECT \(quoted(storage.position)) FROM \(t) WHERE \(k) = ?", arguments: [item.objectID.rawValue]
                    ) ?? nil
                    let position = InterleavedPlacement.position(in: range, current: current)
                    if position != current {
                        try db.execute(
                            sql: "UPDATE \(t) SET \(quoted(storage.position)) = ? WHERE \(k) = ?",
                            arguments: [position, item.objectID.rawValue])
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
                    item.objectID.rawValue, parent: parent, after: neighbour(previous, isChild: previousIsChild),
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
            _ = try OrderedPositions.place(item.objectID.rawValue, parent: parent, at: placement, storage, db)
            guard let fresh = try db.fetchOne(Item.self, id: item.objectID) else { throw ResultsEditError.itemDeleted }
            return fresh
        }

        // The snapshot the list view shows now: the row moved (a section it leaves stays,
        // empty, until the next batch removes it).
        // Batched rows move by id, reading nothing, when the item's value did not change (a
        // move inside its list: the position is not a property); otherwise rows are edited
        // as values.
        var sections = old.sections
        let moveIDs = moved == item
        var sourceRows = sourceSection.rows
        sourceRows.remove(at: source.item, keepingBatched: moveIDs)
        if sameSection {
            sourceRows.insert(.item(moved), id: moved.objectID.rawValue, at: destination.item, keepingBatched: moveIDs)
        } else {
            var destinationRows = targetSection.rows
            destinationRows.insert(.item(moved), id: moved.objectID.rawValue, at: destination.item, keepingBatched: moveIDs)
            sections[destination.section] = ResultsSection(id: targetSection.id, value: targetSection.value, rows: destinationRows)
        }
        sections[source.section] = ResultsSection(id: sourceSection.id, value: sourceSection.value, rows: sourceRows)
        let new = ResultsSnapshot(sections: sections)
        let batch = BatchBuilder.batch(
            from: old, to: new, edit: .move(Move(from: source, to: destination), valueChanged: moved != item))
        deliverUserEdit(batch, new, touched: [sourceSection.id, targetSection.id], before: version)
        settleUserEdit(publishedBefore: version)
    }

    /// The request's order as a move reads it, computed on the first move.
    private func editOrdering() throws -> OrderedRequest {
        if let editOrderingCache { return editOrderingCache }
        let ordering = try OrderedRequest(request: request, schema: store.schema)
        editOrderingCache = ordering
        return ordering
    }

    /// ``moveItem(from:to:)`` with two-index `IndexPath`s, as UIKit reports them.
    public func moveItem(from source: IndexPath, to destination: IndexPath) throws {
        try moveItem(from: ItemPath(source), to: ItemPath(destination))
    }

    /// Deletes the item at `path` of ``snapshot`` (a swipe to delete), in one write
    /// transaction that applies the delete rules. Call it on the delivery queue.
    ///
    /// What is delivered (in ``DeliveryMode/batches``; in ``DeliveryMode/reloads``, a reload
    /// of the same snapshot): before the call returns, every consumer gets one batch with
    /// ``ChangeBatch/userEdit`` `== .delete` that deletes the row (or its section, for a
    /// keyed section it leaves empty), and ``snapshot`` is the snapshot without it. A table
    /// view adapter applies it like any batch (`tableView(_:commit:forRowAt:)` expects the
    /// row's deletion). Later batches are relative to that snapshot, as after a move (rows
    /// that the delete rules removed with it come in the next batch).
    ///
    /// Throws ``ResultsEditError/outsideList(_:)`` or ``ResultsEditError/groupRow(_:)`` for
    /// a path that is not an item, ``ResultsEditError/itemDeleted`` when another writer
    /// deleted it first, and ``DeleteDeniedError`` when a `deny` rule refuses; nothing is
    /// written or delivered then. Works with any request, ordered or not.
    public func deleteItem(at path: ItemPath) throws {
        dispatchPrecondition(condition: .onQueue(deliveryQueue))
        let old = snapshot
        guard path.section >= 0, path.section < old.numberOfSections, path.item >= 0,
              path.item < old.numberOfRows(inSection: path.section)
        else { throw ResultsEditError.outsideList(path) }
        guard let item = old[path].item else { throw ResultsEditError.groupRow(path) }
        var version = 0
        try store.write { db in
            try store.observer.deliverExternalCommits(db)  // as for a move
            version = currentPublishedVersion
            hintEditedRow(item.objectID.rawValue, in: old.sections[path.section].id, at: path.item)
            guard try db.delete(Item.self, id: item.objectID) else { throw ResultsEditError.itemDeleted }
        }
        let section = old.sections[path.section]
        var rows = section.rows
        rows.remove(at: path.item, keepingBatched: true)
        var sections = old.sections
        if rows.isEmpty && section.id.isTransient {
            sections.remove(at: path.section)
        } else {
            sections[path.section] = ResultsSection(id: section.id, value: section.value, rows: rows)
        }
        let new = ResultsSnapshot(sections: sections)
        let batch = BatchBuilder.batch(from: old, to: new, edit: .delete(path))
        deliverUserEdit(batch, new, touched: [section.id], before: version)
        settleUserEdit(publishedBefore: version)
    }

    /// ``deleteItem(at:)`` with a two-index `IndexPath`, as UIKit reports it.
    public func deleteItem(at path: IndexPath) throws {
        try deleteItem(at: ItemPath(path))
    }
}

// MARK: - What a request's order is

/// How a request is ordered by an ordered relationship: which position column, whether the
/// sections follow the parent (entity sections by the same to-one).
struct OrderedRequest {
    var storage: OrderedPositions.Storage
    var parentEntity: String
    /// The parent table's primary key column.
    var parentKey: String
    var descending: Bool
    var sectionsFollowParent: Bool
    /// The index of the position among the request's sort keys.
    var positionIndex: Int
    /// True when rows of several parents can sort among each other: the sections do not
    /// follow the parent, and the sort keys before the position do not include the parent's
    /// key (parents of equal values, `list.rank`, then mix their children by position).
    var parentsMayInterleave: Bool
    /// True when the request orders siblings as the store does, by (position, id): the
    /// position ascends and is the last sort key. Otherwise (`-list.@position`, where
    /// siblings of equal position still follow each other by increasing id, or keys after
    /// the position) a move is placed in the request's order (`SiblingPlacement`).
    var siblingsInStorageOrder: Bool

    init<Item: StrataEntity, Section>(request: ResultsRequest<Item, Section>, schema: SchemaDescriptor) throws {
        let entity = Item.entityDescriptor
        var found: (Int, RelationshipDescriptor, String, String)? = nil
        for (index, key) in request.sortKeys.enumerated() where key.node.path.count == 1 {
            if let relationship = entity.relationships.first(where: { $0.positionColumn == key.node.path[0] }),
               case .foreignKey(let column) = relationship.storage, let position = relationship.positionColumn
            {
                found = (index, relationship, column, position)
                break
            }
        }
        guard let (index, relationship, column, position) = found else {
            throw ResultsEditError.notOrderedByPosition(
                reason: "its sort has no key '<to-one>.@position' of an ordered relationship")
        }
        // Keys before the position must be values of the parent: equal among siblings.
        for key in request.sortKeys[..<index] {
            let path = key.node.path
            guard path == [column] || (path.count >= 2 && path[0] == relationship.name) else {
                throw ResultsEditError.notOrderedByPosition(
                    reason: "the sort key '\(path.joined(separator: "."))' comes before '\(relationship.name).@position' and is not a value of the parent")
            }
        }
        storage = OrderedPositions.Storage(table: entity.name, foreignKey: column, position: position, key: entity.primaryKey)
        parentEntity = relationship.destination
        parentKey = schema.entity(named: relationship.destination)?.primaryKey ?? "id"
        descending = request.sortKeys[index].node.descending
        positionIndex = index
        if case .entity(let path, _, _, _) = request.sectioning.kind, path == [relationship.name] {
            sectionsFollowParent = true
        } else {
            sectionsFollowParent = false
        }
        siblingsInStorageOrder = !descending && index == request.sortKeys.count - 1
        let parentKey = self.parentKey
        parentsMayInterleave = !sectionsFollowParent && !request.sortKeys[..<index].contains { key in
            key.node.path == [column] || key.node.path == [relationship.name, parentKey]
        }
    }
}

// MARK: - Sections a batch touches

extension ChangeBatch {
    /// The sections (by id) whose rows or presence this batch changes, from `old` to `new`.
    func touchedSections<Item, Section>(
        from old: ResultsSnapshot<Item, Section>, to new: ResultsSnapshot<Item, Section>
    ) -> Set<SectionID> {
        var ids = Set<SectionID>()
        for index in sectionDeletes { ids.insert(old.sections[index].id) }
        for index in sectionInserts { ids.insert(new.sections[index].id) }
        for path in itemDeletes + itemUpdates { ids.insert(old.sections[path.section].id) }
        for path in itemInserts + movedAndUpdatedItems { ids.insert(new.sections[path.section].id) }
        for move in itemMoves {
            ids.insert(old.sections[move.from.section].id)
            ids.insert(new.sections[move.to.section].id)
        }
        return ids
    }
}
