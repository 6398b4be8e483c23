/// The values of the items a ``SectionedIndex`` places, by id: every indexed item, shown or
/// hidden, has its value here and nothing else does. Kept apart from the index so that
/// values can be loaded on their own terms (in pages, later) while the index stays whole.
struct ItemPayload<Item: StrataEntity> {
    /// Each value at its id's slot: one small hash table and one array, not a dictionary
    /// whose buckets each hold a value (see ``IDSlots``).
    private var slots = IDSlots()
    private var values: ContiguousArray<Item> = []

    var isEmptyCapacity: Bool { slots.isEmptyCapacity }

    mutating func reserveCapacity(_ count: Int, ids: ClosedRange<Int64>? = nil) {
        slots.reserveCapacity(count, ids: ids)
        values.reserveCapacity(count)
    }

    mutating func removeAll() {
        slots.removeAll()
        values.removeAll(keepingCapacity: true)
    }

    /// The value of the item `id`.
    subscript(id: Int64) -> Item? {
        get { slots.slot(of: id).map { values[$0] } }
        set {
            if let newValue {
                if let slot = slots.slot(of: id) {
                    values[slot] = newValue
                } else {
                    _ = slots.append(id)
                    values.append(newValue)
                }
            } else if let freed = slots.remove(id) {
                values.removeSlot(freed)
            }
        }
    }

    /// Adds the value of the item `id`, which has none (a build's, after ``removeAll()``):
    /// no look-up of its slot.
    mutating func append(_ id: Int64, _ item: Item) {
        _ = slots.append(id)
        values.append(item)
    }

    /// The value in `slot`: the `slot`-th value appended since ``removeAll()``, while none
    /// was removed.
    func value(atSlot slot: Int) -> Item { values[slot] }

    /// Checks that the payload holds exactly the indexed items, each under its own id
    /// (debug builds only).
    func _checkInvariants<Section>(against index: SectionedIndex<Section, FullIndexKeys>) {
        #if DEBUG
        precondition(values.count == slots.count && slots.count == index.count, "payload and index hold different items")
        for (id, item) in zip(slots.ids, values) {
            precondition(item.objectID.rawValue == id, "item \(item.objectID) stored under id \(id)")
            precondition(slots.slot(of: id) != nil, "item \(id) has no slot")
            precondition(index.contains(id), "item \(id) has a value but no place")
        }
        #endif
    }
}
