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
