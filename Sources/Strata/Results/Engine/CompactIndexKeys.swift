import GRDB

/// The key store of batched loading: per item the slot of its section, and the raw section
/// key of a hidden item; sort keys are read from the database (``keyReader``).
struct CompactIndexKeys: IndexKeyStore {
    private var items = ItemSections()
    static var hiddenSlot: UInt32 { SectionSlots.hiddenSlot }
    /// Reads the sort keys of an item from the database; set by the engine while it applies
    /// a commit.
    var keyReader: ((Int64) throws -> [DatabaseValue])?

    init() {}

    var count: Int { items.count }
    var isEmptyCapacity: Bool { items.isEmptyCapacity }

    mutating func reserveCapacity(_ count: Int, ids: ClosedRange<Int64>?) { items.reserveCapacity(count, ids: ids) }
    mutating func removeAll() { items.removeAll() }

    func contains(_ id: Int64) -> Bool { items.contains(id) }
    var ids: [Int64] { items.ids }
    func section(of id: Int64) -> SectionID?? { items.section(of: id) }

    mutating func set(_ id: Int64, _ keys: IndexKeys, section: SectionID?) {
        _ = items.set(id, section: section, rawKey: keys.key)
    }

    mutating func append(_ id: Int64, _ keys: IndexKeys, section: SectionID?) {
        items.append(id, sectionSlot: items.sectionSlot(for: section), rawKey: keys.key)
    }

    /// Indexes the item `id`, not indexed yet, in a section slot a build resolved before
    /// (``slot(of:)``); `rawKey` is kept when the slot is the hidden one.
    mutating func append(_ id: Int64, slot: UInt32, rawKey: DatabaseValue) {
        items.append(id, sectionSlot: slot, rawKey: rawKey)
    }

    mutating func remove(_ id: Int64) { _ = items.remove(id) }
    mutating func settleSlots() { _ = items.settle() }
    mutating func hide(_ id: Int64) -> DatabaseValue? { items.hide(id) }
    mutating func show(_ id: Int64, in section: SectionID) { items.show(id, in: section) }
    func hiddenKey(of id: Int64) -> DatabaseValue? { items.hiddenKey(of: id) }

    func sortKeys(of id: Int64) throws -> ArraySlice<DatabaseValue> {
        guard let keyReader else { preconditionFailure("a compact index reads keys only while a commit is applied") }
        return try keyReader(id)[...]
    }

    /// A scan: a binary search would read keys from the database at every step.
    func position(of id: Int64, in items: RowChunks<Int64>, descending: [Bool]) -> Int {
        guard let index = items.firstIndex(of: id) else { preconditionFailure("item \(id) not in its section") }
        return index
    }

    func slot(of id: Int64) -> UInt32 { items.sectionSlot(of: id) }

    func _shownCount() -> Int { items._shownCount() }
    func _hiddenByKey() -> [Int64: Set<Int64>] { items._hiddenByKey() }

    /// Reads both items' keys with ``keyReader`` (set while a commit is applied, or by a
    /// test). True when there is no reader, or a read fails: no keys are kept to check the
    /// order with otherwise (the property tests compare its results with fresh fetches).
    func _inOrder(_ previous: Int64, _ item: Int64, descending: [Bool]) -> Bool {
        guard let keyReader, let lhs = try? keyReader(previous), let rhs = try? keyReader(item) else { return true }
        return DatabaseValueOrdering.compare(lhs, id: previous, rhs, id: item, descending: descending) < 0
    }
}
