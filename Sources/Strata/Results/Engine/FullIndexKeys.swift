import GRDB

/// The key store of eager loading: every item's sort keys and section, kept at the item's
/// slot (``ItemSlots``) in flat arrays — one column per sort key, each stored by its type
/// (``SortKeyColumn``: an integer key in the fewest bytes, a text key as its `String`) — so
/// that an item costs its keys and a few bytes, not a record in a dictionary bucket and an
/// array of its own.
struct FullIndexKeys: IndexKeyStore, Sendable {
    private var items = ItemSections()
    /// Each sort key of every item, one column per key, by slot.
    private var columns: [SortKeyColumn] = []
    /// The number of sort keys (every item has as many); known from the first item.
    private var width = 0

    init() {}

    var count: Int { items.count }
    var isEmptyCapacity: Bool { items.isEmptyCapacity }

    mutating func reserveCapacity(_ count: Int, ids: ClosedRange<Int64>?) {
        items.reserveCapacity(count, ids: ids)
    }

    mutating func removeAll() {
        items.removeAll()
        for column in columns.indices { columns[column].removeAll() }
    }

    func contains(_ id: Int64) -> Bool { items.contains(id) }
    var ids: [Int64] { items.ids }
    func section(of id: Int64) -> SectionID?? { items.section(of: id) }

    mutating func set(_ id: Int64, _ keys: IndexKeys, section: SectionID?) {
        checkWidth(keys)
        let (slot, _, relayout) = items.set(id, section: section, rawKey: keys.key)
        place(keys, at: slot, after: relayout)
    }

    /// Puts an item's sort keys at its `slot`, after moving every item's as `relayout` says.
    private mutating func place(_ keys: IndexKeys, at slot: Int, after relayout: ItemSlots.Relayout?) {
        if let relayout { for column in columns.indices { columns[column].apply(relayout) } }
        for (column, value) in keys.sort.enumerated() { columns[column].place(value, at: slot) }
    }

    /// After a build: slots by id when the ids lie close (``ItemSlots``), 12 bytes an item less.
    mutating func settleSlots() {
        guard let relayout = items.settle() else { return }
        for column in columns.indices { columns[column].apply(relayout) }
    }

    /// Takes the number of sort keys from the first item (and makes room for every item's),
    /// and checks that every other item has as many.
    private mutating func checkWidth(_ keys: IndexKeys) {
        if items.isEmpty {
            width = keys.sort.count
            if columns.count != width { columns = Array(repeating: SortKeyColumn(), count: width) }
            for column in columns.indices { columns[column].reserveCapacity(items.capacity) }
        }
        precondition(keys.sort.count == width, "items with different numbers of sort keys")
    }

    mutating func append(_ id: Int64, _ keys: IndexKeys, section: SectionID?) {
        checkWidth(keys)
        let (slot, relayout) = items.append(id, sectionSlot: items.sectionSlot(for: section), rawKey: keys.key)
        place(keys, at: slot, after: relayout)
    }

    mutating func remove(_ id: Int64) {
        guard let removal = items.remove(id) else { return }
        for column in columns.indices { columns[column].apply(removal) }
    }

    mutating func hide(_ id: Int64) -> DatabaseValue? { items.hide(id) }
    mutating func show(_ id: Int64, in section: SectionID) { items.show(id, in: section) }
    func hiddenKey(of id: Int64) -> DatabaseValue? { items.hiddenKey(of: id) }

    func sortKeys(of id: Int64) -> ArraySlice<DatabaseValue> {
        guard let slot = items.slot(of: id) else { preconditionFailure("item \(id) not indexed") }
        var keys: [DatabaseValue] = []
        keys.reserveCapacity(width)
        for column in columns { keys.append(column[slot]) }
        return keys[...]
    }

    func position(of id: Int64, in items: RowChunks<Int64>, descending: [Bool]) -> Int {
        // Never throws: the keys are kept.
        try! insertionIndex(of: id, sortKeys(of: id), in: items, descending: descending)
    }

    /// Whether items' slots are their ids' offsets now (``ItemSlots``; for tests).
    var _slotsAreByID: Bool { items.isByID }

    func _shownCount() -> Int { items._shownCount() }
    func _hiddenByKey() -> [Int64: Set<Int64>] { items._hiddenByKey() }

    func _inOrder(_ previous: Int64, _ item: Int64, descending: [Bool]) -> Bool {
        DatabaseValueOrdering.compare(sortKeys(of: previous), id: previous, sortKeys(of: item), id: item, descending: descending) < 0
    }
}
