/// The difference between two ``ResultsSnapshot``s, in the form UIKit's
/// `performBatchUpdates` accepts.
///
/// Rules (checked by ``BatchValidator``, and relied on by ``apply(to:reading:)``):
///
/// 1. Deletes and updates are in the **old** index space; inserts and move targets in the
///    **new** one.
/// 2. No index or path appears twice in one list; no section or path is both deleted and
///    moved, both deleted and updated, or both moved and updated; no insert shares its
///    target with a move.
/// 3. No item operation names a section that the batch inserts or deletes.
/// 4. An item (or section) that changed **and** moved is reported only as a move; its new
///    position is also listed in ``movedAndUpdatedItems`` (``movedAndUpdatedSections``),
///    new index space, so a consumer can reconfigure exactly those cells after the
///    animated update. UIKit refuses to reload an index path that also moves.
/// 5. A section update means that the section's own value changed (a renamed notebook),
///    never merely that one of its items did. Refresh the section header for it; do not
///    `reloadSections`, which would conflict with item operations inside the section.
/// 6. Per-section counts balance: for every section present before and after,
///    `old count − deletes − moves out + inserts + moves in == new count`.
/// 7. ``apply(to:reading:)`` of the batch to the old snapshot yields the new snapshot.
///
/// Every list is sorted.
public struct ChangeBatch: Hashable, Sendable, CustomStringConvertible {
    /// Sections that are gone (old indexes).
    public var sectionDeletes: [Int]
    /// Sections that appeared, empty ones included (new indexes).
    public var sectionInserts: [Int]
    /// Sections whose position changed (old index → new index).
    public var sectionMoves: [Move<Int>]
    /// Sections whose own value changed and that did not move (old indexes).
    public var sectionUpdates: [Int]
    /// Sections whose own value changed and that moved (new indexes; each is a move target).
    public var movedAndUpdatedSections: [Int]
    /// Rows that are gone (old paths).
    public var itemDeletes: [ItemPath]
    /// Rows that appeared (new paths).
    public var itemInserts: [ItemPath]
    /// Rows whose position changed, within or across sections (old path → new path).
    public var itemMoves: [Move<ItemPath>]
    /// Rows whose value changed and that did not move (old paths).
    public var itemUpdates: [ItemPath]
    /// Rows whose value changed and that moved (new paths; each is a move target).
    public var movedAndUpdatedItems: [ItemPath]
    /// Set on the batch a user edit delivers before it returns (``ResultsController/moveItem(from:to:)-(ItemPath,_)``,
    /// ``ResultsController/deleteItem(at:)-(ItemPath)``); nil for batches of commits and options.
    /// For ``UserEdit/move`` the list view already shows the change (the user dragged the
    /// row): take the new snapshot without animating. A ``UserEdit/delete`` is applied like
    /// any batch.
    public var userEdit: UserEdit? = nil

    /// What the user did that a batch reports.
    public enum UserEdit: Hashable, Sendable {
        /// The user moved one row (``itemMoves`` holds it); the list view already shows it.
        case move
        /// The user deleted one row (``itemDeletes`` holds it, or ``sectionDeletes`` its
        /// section when the section goes with it); the list view does not show it yet.
        case delete
    }

    /// A batch; lists are sorted on creation.
    public init(
        sectionDeletes: [Int] = [], sectionInserts: [Int] = [], sectionMoves: [Move<Int>] = [],
        sectionUpdates: [Int] = [], movedAndUpdatedSections: [Int] = [],
        itemDeletes: [ItemPath] = [], itemInserts: [ItemPath] = [], itemMoves: [Move<ItemPath>] = [],
        itemUpdates: [ItemPath] = [], movedAndUpdatedItems: [ItemPath] = []
    ) {
        self.sectionDeletes = sectionDeletes.sorted()
        self.sectionInserts = sectionInserts.sorted()
        self.sectionMoves = sectionMoves.sorted()
        self.sectionUpdates = sectionUpdates.sorted()
        self.movedAndUpdatedSections = movedAndUpdatedSections.sorted()
        self.itemDeletes = itemDeletes.sorted()
        self.itemInserts = itemInserts.sorted()
        self.itemMoves = itemMoves.sorted()
        self.itemUpdates = itemUpdates.sorted()
        self.movedAndUpdatedItems = movedAndUpdatedItems.sorted()
    }

    /// True when the batch changes nothing.
    public var isEmpty: Bool {
        sectionDeletes.isEmpty && sectionInserts.isEmpty && sectionMoves.isEmpty && sectionUpdates.isEmpty
            && movedAndUpdatedSections.isEmpty && itemDeletes.isEmpty && itemInserts.isEmpty
            && itemMoves.isEmpty && itemUpdates.isEmpty && movedAndUpdatedItems.isEmpty
    }

    /// A compact description listing the non-empty lists, for test output:
    /// `sections -[1] +[0] ~[2] items -[[0, 1]] +[[1, 0]] [0, 2]→[1, 1]`.
    public var description: String {
        var parts: [String] = []
        func add<T>(_ label: String, _ list: [T]) {
            if !list.isEmpty { parts.append(label + "[" + list.map { "\($0)" }.joined(separator: ", ") + "]") }
        }
        add("s-", sectionDeletes)
        add("s+", sectionInserts)
        add("s>", sectionMoves)
        add("s~", sectionUpdates)
        add("s>~", movedAndUpdatedSections)
        add("i-", itemDeletes)
        add("i+", itemInserts)
        add("i>", itemMoves)
        add("i~", itemUpdates)
        add("i>~", movedAndUpdatedItems)
        if let userEdit { parts.append("(user \(userEdit))") }
        return parts.isEmpty ? "(no changes)" : parts.joined(separator: " ")
    }
}

/// A move from an old position to a new one.
public struct Move<Index: Hashable & Comparable & Sendable>: Hashable, Comparable, Sendable,
    CustomStringConvertible
{
    /// The position before (old index space).
    public var from: Index
    /// The position after (new index space).
    public var to: Index

    /// A move.
    public init(from: Index, to: Index) {
        self.from = from
        self.to = to
    }

    /// Ordered by source, then target.
    public static func < (lhs: Move, rhs: Move) -> Bool {
        lhs.from < rhs.from || (lhs.from == rhs.from && lhs.to < rhs.to)
    }

    /// `from→to`.
    public var description: String { "\(from)→\(to)" }
}
