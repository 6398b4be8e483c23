import GRDB

/// What both key stores keep of every item: its slot (``ItemSlots``), its section as a small
/// number (``SectionSlots``), and the raw section key of a hidden item.
///
/// A key store that keeps more of an item at its slot applies what ``set(_:sectionSlot:rawKey:)``,
/// ``append(_:sectionSlot:rawKey:)``, ``remove(_:)`` and ``settle()`` return to its own arrays.
struct ItemSections: Sendable {
    private var slots = ItemSlots()
    /// Each item's section slot (``SectionSlots/hiddenSlot`` when hidden), by item slot.
    private var sectionSlots = SectionSlotColumn()
    private var sectionTable = SectionSlots()
    /// The raw section key of each hidden item.
    private var hiddenKeys: [Int64: DatabaseValue] = [:]

    var count: Int { slots.count }
    var isEmpty: Bool { slots.count == 0 }
    var isEmptyCapacity: Bool { slots.isEmptyCapacity }
    var capacity: Int { sectionSlots.capacity }
    var ids: [Int64] { slots.ids }
    /// The length of the per-slot arrays (holes included, see ``ItemSlots``).
    var slotCount: Int { slots.slotCount }
    /// Whether slots are ids' offsets.
    var isByID: Bool { slots.isByID }

    mutating func reserveCapacity(_ count: Int, ids: ClosedRange<Int64>?) {
        slots.reserveCapacity(count, ids: ids)
        sectionSlots.reserveCapacity(count)
    }

    mutating func removeAll() {
        slots.removeAll()
        sectionSlots.removeAll()
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
    mutating func set(_ id: Int64, section: SectionID?, rawKey: DatabaseValue) -> (slot: Int, isNew: Bool, relayout: ItemSlots.Relayout?) {
        set(id, sectionSlot: sectionTable.slot(for: section), rawKey: rawKey)
    }

    /// Indexes `id`, which has no slot, in the section of `sectionSlot` (``SectionSlots/hiddenSlot``:
    /// hidden, filed under `rawKey`), without looking its slot up.
    /// Returns its slot, and the relayout the owner applies first.
    @discardableResult
    mutating func append(_ id: Int64, sectionSlot: UInt32, rawKey: DatabaseValue) -> (slot: Int, relayout: ItemSlots.Relayout?) {
        let (slot, relayout) = insert(id, sectionSlot: sectionSlot)
        if sectionSlot == SectionSlots.hiddenSlot { hiddenKeys[id] = rawKey }
        return (slot, relayout)
    }

    /// Gives `id`, which has none, a slot and its section slot there, after the relayout the
    /// slots ask for (returned for the owner).
    private mutating func insert(_ id: Int64, sectionSlot: UInt32) -> (slot: Int, relayout: ItemSlots.Relayout?) {
        let (slot, relayout) = slots.insert(id)
        if let relayout { sectionSlots.apply(relayout) }
        sectionSlots.place(sectionSlot, at: slot)
        return (slot, relayout)
    }

    /// After a build: the slots' layout by id when the ids lie close (``ItemSlots/settle()``);
    /// returns the relayout the owner applies.
    mutating func settle() -> ItemSlots.Relayout? {
        guard let relayout = slots.settle() else { return nil }
        sectionSlots.apply(relayout)
        return relayout
    }

    /// ``set(_:section:rawKey:)`` with a section slot resolved before; a new item's
    /// `relayout` is applied by the owner first.
    @discardableResult
    mutating func set(_ id: Int64, sectionSlot: UInt32, rawKey: DatabaseValue) -> (slot: Int, isNew: Bool, relayout: ItemSlots.Relayout?) {
        let result: (slot: Int, isNew: Bool, relayout: ItemSlots.Relayout?)
        if let slot = slots.slot(of: id) {
            sectionSlots[slot] = sectionSlot
            result = (slot, false, nil)
        } else {
            let (slot, relayout) = insert(id, sectionSlot: sectionSlot)
            result = (slot, true, relayout)
        }
        if sectionSlot == SectionSlots.hiddenSlot { hiddenKeys[id] = rawKey } else if !hiddenKeys.isEmpty { hiddenKeys[id] = nil }
        return result
    }

    /// Forgets `id`; returns what the owner does to its arrays (``ItemSlots/Removal``).
    mutating func remove(_ id: Int64) -> ItemSlots.Removal? {
        guard let removal = slots.remove(id) else { return nil }
        sectionSlots.apply(removal)
        hiddenKeys[id] = nil
        return removal
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

    func _shownCount() -> Int {
        precondition(sectionSlots.count == slots.slotCount, "section slots and item slots out of step")
        var shown = 0
        slots.forEach { _, slot in if sectionSlots[slot] != SectionSlots.hiddenSlot { shown += 1 } }
        return shown
    }

    func _hiddenByKey() -> [Int64: Set<Int64>] {
        var hidden: [Int64: Set<Int64>] = [:]
        slots.forEach { id, slot in
            guard sectionSlots[slot] == SectionSlots.hiddenSlot else { return }
            if case .int64(let key)? = hiddenKeys[id]?.storage { hidden[key, default: []].insert(id) }
        }
        for id in hiddenKeys.keys {
            precondition(sectionSlot(of: id) == SectionSlots.hiddenSlot, "item \(id) has a hidden key but is shown")
        }
        return hidden
    }
}
