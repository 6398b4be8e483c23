import Dispatch
import Foundation
import GRDB

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

        let write = MoveWrite<Item, Section>(
            ordering: ordering, item: item, newParent: newParent, destinationSection: targetSection.id,
            previous: previous, next: next)
        try edit(item.objectID.rawValue, at: source, in: sourceSection.id) { db, fetcher in
            let moved = try write.write(db, fetcher: fetcher)
            return .move(Move(from: source, to: destination), item: moved, valueChanged: moved != item)
        }
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
        try edit(item.objectID.rawValue, at: path, in: old.sections[path.section].id) { db, _ in
            guard try db.delete(Item.self, id: item.objectID) else { throw ResultsEditError.itemDeleted }
            return .delete(path)
        }
    }

    /// ``deleteItem(at:)`` with a two-index `IndexPath`, as UIKit reports it.
    public func deleteItem(at path: IndexPath) throws {
        try deleteItem(at: ItemPath(path))
    }
}

