import GRDB

/// What a ``SectionedIndex`` keeps of each item to place it: one implementation per
/// loading, chosen once with the index's type.
///
/// - ``FullIndexKeys`` (eager loading) keeps every item's sort and section keys: an item is
///   found and placed by binary search on them, and many changed rows can be merged in bulk.
/// - ``CompactIndexKeys`` (batched loading) keeps per item only the slot of its section (and
///   the raw key of a hidden item), a few bytes: the sort keys a binary search visits are read
///   from the database through ``CompactIndexKeys/keyReader`` while a commit is applied (the
///   items it has not removed are unchanged, so their stored keys are their keys), and an
///   item to remove is found by a scan of its section.
///
/// The index owns the sections and the hidden-item index; a key store answers only for
/// single items.
protocol IndexKeyStore {
    init()

    /// The number of items, shown or hidden.
    var count: Int { get }
    var isEmptyCapacity: Bool { get }
    /// Makes room for `count` items, whose ids are in `ids` when known.
    mutating func reserveCapacity(_ count: Int, ids: ClosedRange<Int64>?)
    mutating func removeAll()

    /// Whether the item `id` is indexed (shown or hidden).
    func contains(_ id: Int64) -> Bool
    /// Every indexed id.
    var ids: [Int64] { get }
    /// The section of the item `id`: nil when not indexed, `.some(nil)` when hidden.
    func section(of id: Int64) -> SectionID??

    /// Indexes the item `id` read afresh with `keys`, in `section` (nil: hidden).
    mutating func set(_ id: Int64, _ keys: IndexKeys, section: SectionID?)
    /// ``set(_:_:section:)`` for an item not indexed (a build's, after ``removeAll()``):
    /// no look-up of its slot, which is a cache miss per item when ids come in sort order.
    mutating func append(_ id: Int64, _ keys: IndexKeys, section: SectionID?)
    /// Forgets the item `id`.
    mutating func remove(_ id: Int64)
    /// Ends a build: chooses how items' slots are laid out now that their ids are known
    /// (``ItemSlots/settle()``).
    mutating func settleSlots()
    /// Takes the indexed item `id` out of its section; returns the raw key to file it under
    /// among the hidden items, if one is known.
    mutating func hide(_ id: Int64) -> DatabaseValue?
    /// Puts the hidden item `id` into `section` (its section appeared).
    mutating func show(_ id: Int64, in section: SectionID)
    /// The raw section key of a hidden item.
    func hiddenKey(of id: Int64) -> DatabaseValue?

    /// The sort keys of the indexed item `id`.
    func sortKeys(of id: Int64) throws -> ArraySlice<DatabaseValue>
    /// The position of the indexed item `id` in `items`, its section's, in an order of
    /// `descending` sort keys.
    func position(of id: Int64, in items: RowChunks<Int64>, descending: [Bool]) throws -> Int

    /// A build's cache of where an integer or NULL raw key placed the last item with it, so
    /// that the next is placed without hashing a section id (see ``CompactIndexKeys``).
    func slot(of id: Int64) -> UInt32

    /// Checks the store against the index's sections (debug builds only): `shown` items are
    /// in sections; returns the hidden items by their section object's id, and whether
    /// `previous` precedes `item` (true when no keys are kept or read to tell).
    func _shownCount() -> Int
    func _hiddenByKey() -> [Int64: Set<Int64>]
    func _inOrder(_ previous: Int64, _ item: Int64, descending: [Bool]) -> Bool
}

extension IndexKeyStore {
    func slot(of id: Int64) -> UInt32 { .max }

    /// Where `id` with `sort` keys is in `items`, or where it belongs: a binary search that
    /// reads the keys of the items it visits.
    func insertionIndex(of id: Int64, _ sort: ArraySlice<DatabaseValue>, in items: RowChunks<Int64>, descending: [Bool]) throws -> Int {
        var low = 0
        var high = items.count
        while low < high {
            let mid = (low + high) / 2
            let other = items[mid]
            if DatabaseValueOrdering.compare(try sortKeys(of: other), id: other, sort, id: id, descending: descending) < 0 {
                low = mid + 1
            } else {
                high = mid
            }
        }
        return low
    }
}
