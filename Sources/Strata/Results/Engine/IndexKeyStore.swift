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
    mutating func reserveCapacity(_ count: Int)
    mutating func removeAll()

    /// Whether the item `id` is indexed (shown or hidden).
    func contains(_ id: Int64) -> Bool
    /// Every indexed id.
    var ids: [Int64] { get }
    /// The section of the item `id`: nil when not indexed, `.some(nil)` when hidden.
    func section(of id: Int64) -> SectionID??

    /// Indexes the item `id` read afresh with `keys`, in `section` (nil: hidden).
    mutating func set(_ id: Int64, _ keys: IndexKeys, section: SectionID?)
    /// Forgets the item `id`.
    mutating func remove(_ id: Int64)
    /// Takes the indexed item `id` out of its section; returns the raw key to file it under
    /// among the hidden items, if one is known.
    mutating func hide(_ id: Int64) -> DatabaseValue?
    /// Puts the hidden item `id` into `section` (its section appeared).
    mutating func show(_ id: Int64, in section: SectionID)
    /// The raw section key of a hidden item.
    func hiddenKey(of id: Int64) -> DatabaseValue?

    /// The sort keys of the indexed item `id`.
    func sortKeys(of id: Int64) throws -> [DatabaseValue]
    /// The position of the indexed item `id` in `items`, its section's, in an order of
    /// `descending` sort keys.
    func position(of id: Int64, in items: RowChunks<Int64>, descending: [Bool]) throws -> Int

    /// A build's cache of where an integer or NULL raw key placed the last item with it, so
    /// that the next is placed without hashing a section id (see ``CompactIndexKeys``).
    func slot(of id: Int64) -> UInt32

    /// Checks the store against the index's sections (debug builds only): `shown` items are
    /// in sections; returns the hidden items by their section object's id, and whether
    /// `previous` precedes `item` (true when no keys are kept to tell).
    func _shownCount() -> Int
    func _hiddenByKey() -> [Int64: Set<Int64>]
    func _inOrder(_ previous: Int64, _ item: Int64, descending: [Bool]) -> Bool
}

extension IndexKeyStore {
    func slot(of id: Int64) -> UInt32 { .max }

    /// Where `id` with `sort` keys is in `items`, or where it belongs: a binary search that
    /// reads the keys of the items it visits.
    func insertionIndex(of id: Int64, _ sort: [DatabaseValue], in items: RowChunks<Int64>, descending: [Bool]) throws -> Int {
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

/// An item's place in a full index: its keys, and its section.
struct SectionedIndexRecord {
    var keys: IndexKeys
    /// The section the item is in; nil when its section is not shown.
    var section: SectionID?
}

/// The key store of eager loading: every item's keys and section, in one dictionary.
struct FullIndexKeys: IndexKeyStore {
    typealias Record = SectionedIndexRecord

    /// The records, by item id.
    private(set) var records: [Int64: Record] = [:]

    init() {}

    var count: Int { records.count }
    var isEmptyCapacity: Bool { records.capacity == 0 }
    mutating func reserveCapacity(_ count: Int) { records.reserveCapacity(count) }
    mutating func removeAll() { records.removeAll(keepingCapacity: true) }
    func contains(_ id: Int64) -> Bool { records[id] != nil }
    var ids: [Int64] { Array(records.keys) }

    func section(of id: Int64) -> SectionID?? {
        guard let record = records[id] else { return nil }
        return .some(record.section)
    }

    mutating func set(_ id: Int64, _ keys: IndexKeys, section: SectionID?) {
        records[id] = Record(keys: keys, section: section)
    }

    mutating func remove(_ id: Int64) { records[id] = nil }

    mutating func hide(_ id: Int64) -> DatabaseValue? {
        guard let index = records.index(forKey: id) else { return nil }
        records.values[index].section = nil
        return records.values[index].keys.key
    }

    mutating func show(_ id: Int64, in section: SectionID) { records[id]?.section = section }

    func hiddenKey(of id: Int64) -> DatabaseValue? { records[id]?.keys.key }

    func sortKeys(of id: Int64) -> [DatabaseValue] { records[id]!.keys.sort }

    func position(of id: Int64, in items: RowChunks<Int64>, descending: [Bool]) -> Int {
        // Never throws: the keys are kept.
        try! insertionIndex(of: id, records[id]!.keys.sort, in: items, descending: descending)
    }

    func _shownCount() -> Int { records.values.filter { $0.section != nil }.count }

    func _hiddenByKey() -> [Int64: Set<Int64>] {
        var hidden: [Int64: Set<Int64>] = [:]
        for (id, record) in records where record.section == nil {
            if case .int64(let key) = record.keys.key.storage { hidden[key, default: []].insert(id) }
        }
        return hidden
    }

    func _inOrder(_ previous: Int64, _ item: Int64, descending: [Bool]) -> Bool {
        DatabaseValueOrdering.compare(
            records[previous]!.keys.sort, id: previous, records[item]!.keys.sort, id: item, descending: descending) < 0
    }

    /// The record of the item `id` (the bulk merge reads kept items' keys through it).
    func record(_ id: Int64) -> Record? { records[id] }
    /// Sets the record of `id` directly (the bulk replacement).
    mutating func setRecord(_ id: Int64, _ record: Record?) { records[id] = record }
}

/// The key store of batched loading: per item the slot of its section, and the raw section
/// key of a hidden item; sort keys are read from the database (``keyReader``).
struct CompactIndexKeys: IndexKeyStore {
    /// Each item's section slot (``hiddenSlot`` when hidden).
    private var slots: [Int64: UInt32] = [:]
    private var slotSections: [SectionID] = []
    private var slotOfSection: [SectionID: UInt32] = [:]
    /// The raw section key of each hidden item.
    private var hiddenKeys: [Int64: DatabaseValue] = [:]
    static var hiddenSlot: UInt32 { .max }
    /// Reads the sort keys of an item from the database; set by the engine while it applies
    /// a commit.
    var keyReader: ((Int64) throws -> [DatabaseValue])?

    init() {}

    var count: Int { slots.count }
    var isEmptyCapacity: Bool { slots.capacity == 0 }
    mutating func reserveCapacity(_ count: Int) { slots.reserveCapacity(count) }

    mutating func removeAll() {
        slots.removeAll(keepingCapacity: true)
        hiddenKeys = [:]
    }

    func contains(_ id: Int64) -> Bool { slots[id] != nil }
    var ids: [Int64] { Array(slots.keys) }

    func section(of id: Int64) -> SectionID?? {
        guard let slot = slots[id] else { return nil }
        return .some(slot == Self.hiddenSlot ? nil : slotSections[Int(slot)])
    }

    mutating func set(_ id: Int64, _ keys: IndexKeys, section: SectionID?) {
        slots[id] = slot(for: section)
        if section == nil { hiddenKeys[id] = keys.key }
    }

    /// Places the item `id` in a slot a build resolved before (``slot(of:)``); `rawKey` is
    /// kept when the slot is the hidden one.
    mutating func set(_ id: Int64, slot: UInt32, rawKey: DatabaseValue) {
        slots[id] = slot
        if slot == Self.hiddenSlot { hiddenKeys[id] = rawKey }
    }

    mutating func remove(_ id: Int64) {
        slots[id] = nil
        hiddenKeys[id] = nil
    }

    mutating func hide(_ id: Int64) -> DatabaseValue? {
        guard let found = section(of: id) else { return nil }
        // The raw key is known from the section: an entity section's object id.
        slots[id] = Self.hiddenSlot
        guard case .some(.object(let key)) = found else { return nil }
        hiddenKeys[id] = key.databaseValue
        return key.databaseValue
    }

    mutating func show(_ id: Int64, in section: SectionID) {
        slots[id] = slot(for: section)
        hiddenKeys[id] = nil
    }

    func hiddenKey(of id: Int64) -> DatabaseValue? { hiddenKeys[id] }

    func sortKeys(of id: Int64) throws -> [DatabaseValue] {
        guard let keyReader else { preconditionFailure("a compact index reads keys only while a commit is applied") }
        return try keyReader(id)
    }

    /// A scan: a binary search would read keys from the database at every step.
    func position(of id: Int64, in items: RowChunks<Int64>, descending: [Bool]) -> Int {
        guard let index = items.firstIndex(of: id) else { preconditionFailure("item \(id) not in its section") }
        return index
    }

    func slot(of id: Int64) -> UInt32 { slots[id] ?? Self.hiddenSlot }

    private mutating func slot(for section: SectionID?) -> UInt32 {
        guard let section else { return Self.hiddenSlot }
        if let slot = slotOfSection[section] { return slot }
        let slot = UInt32(slotSections.count)
        slotSections.append(section)
        slotOfSection[section] = slot
        return slot
    }

    func _shownCount() -> Int { slots.values.filter { $0 != Self.hiddenSlot }.count }

    func _hiddenByKey() -> [Int64: Set<Int64>] {
        var hidden: [Int64: Set<Int64>] = [:]
        for (id, slot) in slots where slot == Self.hiddenSlot {
            if case .int64(let key)? = hiddenKeys[id]?.storage { hidden[key, default: []].insert(id) }
        }
        return hidden
    }

    /// No keys are kept to check the order with (the property tests compare its results
    /// with fresh fetches).
    func _inOrder(_ previous: Int64, _ item: Int64, descending: [Bool]) -> Bool { true }
}
