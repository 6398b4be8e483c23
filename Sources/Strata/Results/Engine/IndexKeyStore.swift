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

/// The key store of eager loading: every item's sort keys and section, kept at the item's
/// slot (``IDSlots``) in flat arrays — the sort keys of all items in one array, `width` per
/// item — so that an item costs its keys and a few bytes, not a record in a dictionary
/// bucket and an array of its own.
struct FullIndexKeys: IndexKeyStore, Sendable {
    private var items = ItemSections()
    /// The sort keys of every item, `width` per slot.
    private var sortValues: ContiguousArray<DatabaseValue> = []
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
        sortValues.removeAll(keepingCapacity: true)
    }

    func contains(_ id: Int64) -> Bool { items.contains(id) }
    var ids: [Int64] { items.ids }
    func section(of id: Int64) -> SectionID?? { items.section(of: id) }

    mutating func set(_ id: Int64, _ keys: IndexKeys, section: SectionID?) {
        checkWidth(keys)
        let (slot, isNew) = items.set(id, section: section, rawKey: keys.key)
        if isNew {
            sortValues.append(contentsOf: keys.sort)
        } else {
            for (offset, value) in keys.sort.enumerated() { sortValues[slot * width + offset] = value }
        }
    }

    /// Takes the number of sort keys from the first item (and makes room for every item's),
    /// and checks that every other item has as many.
    private mutating func checkWidth(_ keys: IndexKeys) {
        if items.isEmpty {
            width = keys.sort.count
            if sortValues.capacity < items.capacity * width { sortValues.reserveCapacity(items.capacity * width) }
        }
        precondition(keys.sort.count == width, "items with different numbers of sort keys")
    }

    mutating func append(_ id: Int64, _ keys: IndexKeys, section: SectionID?) {
        checkWidth(keys)
        items.append(id, sectionSlot: items.sectionSlot(for: section), rawKey: keys.key)
        sortValues.append(contentsOf: keys.sort)
    }

    mutating func remove(_ id: Int64) {
        guard let freed = items.remove(id) else { return }
        if freed.slot != freed.last {
            for offset in 0..<width { sortValues[freed.slot * width + offset] = sortValues[freed.last * width + offset] }
        }
        sortValues.removeLast(width)
    }

    mutating func hide(_ id: Int64) -> DatabaseValue? { items.hide(id) }
    mutating func show(_ id: Int64, in section: SectionID) { items.show(id, in: section) }
    func hiddenKey(of id: Int64) -> DatabaseValue? { items.hiddenKey(of: id) }

    func sortKeys(of id: Int64) -> ArraySlice<DatabaseValue> {
        guard let slot = items.slot(of: id) else { preconditionFailure("item \(id) not indexed") }
        return sortValues[(slot * width)..<((slot + 1) * width)]
    }

    func position(of id: Int64, in items: RowChunks<Int64>, descending: [Bool]) -> Int {
        // Never throws: the keys are kept.
        try! insertionIndex(of: id, sortKeys(of: id), in: items, descending: descending)
    }

    func _shownCount() -> Int { items._shownCount() }
    func _hiddenByKey() -> [Int64: Set<Int64>] { items._hiddenByKey() }

    func _inOrder(_ previous: Int64, _ item: Int64, descending: [Bool]) -> Bool {
        DatabaseValueOrdering.compare(sortKeys(of: previous), id: previous, sortKeys(of: item), id: item, descending: descending) < 0
    }
}

/// What both key stores keep of every item: its slot (``IDSlots``), its section as a small
/// number (``SectionSlots``), and the raw section key of a hidden item.
struct ItemSections: Sendable {
    private var slots = IDSlots()
    /// Each item's section slot (``SectionSlots/hiddenSlot`` when hidden), by item slot.
    private var sectionSlots: ContiguousArray<UInt32> = []
    private var sectionTable = SectionSlots()
    /// The raw section key of each hidden item.
    private var hiddenKeys: [Int64: DatabaseValue] = [:]

    var count: Int { slots.count }
    var isEmpty: Bool { slots.count == 0 }
    var isEmptyCapacity: Bool { slots.isEmptyCapacity }
    var capacity: Int { sectionSlots.capacity }
    var ids: [Int64] { Array(slots.ids) }

    mutating func reserveCapacity(_ count: Int, ids: ClosedRange<Int64>?) {
        slots.reserveCapacity(count, ids: ids)
        sectionSlots.reserveCapacity(count)
    }

    mutating func removeAll() {
        slots.removeAll()
        sectionSlots.removeAll(keepingCapacity: true)
        hiddenKeys = [:]
        // Sections met before a refetch are not kept: slots are never reused otherwise.
        sectionTable = SectionSlots()
    }

    func slot(of id: Int64) -> Int? { slots.slot(of: id) }
    func contains(_ id: Int64) -> Bool { slots.slot(of: id) != nil }

    /// The section of the item `id`: nil when not indexed, `.some(nil)` when hidden.
    func section(of id: Int64) -> SectionID?? {
        guard let slot = slots.slot(of: id) else { return nil }
        return .some(sectionTable.section(sectionSlots[slot]))
    }

    /// The section slot of the item `id` (``SectionSlots/hiddenSlot`` when hidden or absent).
    func sectionSlot(of id: Int64) -> UInt32 { slots.slot(of: id).map { sectionSlots[$0] } ?? SectionSlots.hiddenSlot }

    /// The section slot of `section` (nil: hidden), made on first use.
    mutating func sectionSlot(for section: SectionID?) -> UInt32 { sectionTable.slot(for: section) }

    /// Indexes `id` in `section` (nil: hidden, filed under `rawKey`); returns its slot and
    /// whether it is new (appended) rather than moved.
    mutating func set(_ id: Int64, section: SectionID?, rawKey: DatabaseValue) -> (slot: Int, isNew: Bool) {
        set(id, sectionSlot: sectionTable.slot(for: section), rawKey: rawKey)
    }

    /// Indexes `id`, which has no slot, in the section of `sectionSlot` (``SectionSlots/hiddenSlot``:
    /// hidden, filed under `rawKey`), without looking its slot up.
    mutating func append(_ id: Int64, sectionSlot: UInt32, rawKey: DatabaseValue) {
        _ = slots.append(id)
        sectionSlots.append(sectionSlot)
        if sectionSlot == SectionSlots.hiddenSlot { hiddenKeys[id] = rawKey }
    }

    /// ``set(_:section:rawKey:)`` with a section slot resolved before.
    @discardableResult
    mutating func set(_ id: Int64, sectionSlot: UInt32, rawKey: DatabaseValue) -> (slot: Int, isNew: Bool) {
        let result: (slot: Int, isNew: Bool)
        if let slot = slots.slot(of: id) {
            sectionSlots[slot] = sectionSlot
            result = (slot, false)
        } else {
            result = (slots.append(id), true)
            sectionSlots.append(sectionSlot)
        }
        if sectionSlot == SectionSlots.hiddenSlot { hiddenKeys[id] = rawKey } else if !hiddenKeys.isEmpty { hiddenKeys[id] = nil }
        return result
    }

    /// Forgets `id`; returns the freed slot and the last one, whose element moved into it.
    mutating func remove(_ id: Int64) -> (slot: Int, last: Int)? {
        guard let freed = slots.remove(id) else { return nil }
        sectionSlots.removeSlot(freed)
        hiddenKeys[id] = nil
        return freed
    }

    /// Takes the item `id` out of its section; returns the key it is filed under among the
    /// hidden items, known from its section: an entity section's object id (the only
    /// hidden items a section can adopt, filed by integer), a keyed section's key (the
    /// letter, for first-letter sections).
    mutating func hide(_ id: Int64) -> DatabaseValue? {
        guard let slot = slots.slot(of: id) else { return nil }
        if let key = hiddenKeys[id] { return key }
        let key: DatabaseValue
        switch sectionTable.section(sectionSlots[slot]) {
        case .object(let object)?: key = object.databaseValue
        case .key(let value)?: key = value
        case .single?, .orphans?, nil: key = .null
        }
        sectionSlots[slot] = SectionSlots.hiddenSlot
        hiddenKeys[id] = key
        return key
    }

    mutating func show(_ id: Int64, in section: SectionID) {
        guard let slot = slots.slot(of: id) else { return }
        sectionSlots[slot] = sectionTable.slot(for: section)
        hiddenKeys[id] = nil
    }

    func hiddenKey(of id: Int64) -> DatabaseValue? { hiddenKeys[id] }

    func _shownCount() -> Int { sectionSlots.filter { $0 != SectionSlots.hiddenSlot }.count }

    func _hiddenByKey() -> [Int64: Set<Int64>] {
        var hidden: [Int64: Set<Int64>] = [:]
        for (id, slot) in zip(slots.ids, sectionSlots) where slot == SectionSlots.hiddenSlot {
            if case .int64(let key)? = hiddenKeys[id]?.storage { hidden[key, default: []].insert(id) }
        }
        for id in hiddenKeys.keys {
            precondition(sectionSlot(of: id) == SectionSlots.hiddenSlot, "item \(id) has a hidden key but is shown")
        }
        return hidden
    }
}

/// Sections by small numbers, for key stores that keep an item's section in a few bytes.
struct SectionSlots: Sendable {
    static var hiddenSlot: UInt32 { .max }
    private var sections: [SectionID] = []
    private var slotOfSection: [SectionID: UInt32] = [:]

    /// The section of `slot`; nil for ``hiddenSlot``.
    func section(_ slot: UInt32) -> SectionID? {
        slot == Self.hiddenSlot ? nil : sections[Int(slot)]
    }

    /// The slot of `section` (nil: ``hiddenSlot``), made on first use. Slots are not reused
    /// until the index starts over (a refetch): there are as many as distinct sections met
    /// since.
    mutating func slot(for section: SectionID?) -> UInt32 {
        guard let section else { return Self.hiddenSlot }
        if let slot = slotOfSection[section] { return slot }
        let slot = UInt32(sections.count)
        sections.append(section)
        slotOfSection[section] = slot
        return slot
    }
}

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
