/// Values of items by id, in one small hash table and one array: the values of the items no
/// section's rows hold (``SnapshotJournal``), a fetch's values in reading order, and the
/// values a refetch keeps to compare by id.
struct ItemPayload<Item: StrataEntity> {
    /// Each value at its id's slot: one small hash table and one array, not a dictionary
    /// whose buckets each hold a value (see ``IDSlots``).
    private var slots = IDSlots()
    private var values: ContiguousArray<Item> = []

    var isEmptyCapacity: Bool { slots.isEmptyCapacity }
    /// The number of values.
    var count: Int { values.count }

    /// Calls `body` with every id and its value, in storage order.
    func forEach(_ body: (Int64, Item) -> Void) {
        for (id, item) in zip(slots.ids, values) { body(id, item) }
    }

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

    /// The slot of the item `id`: the number of values appended before it since
    /// ``removeAll()``, while none was removed; nil when it has none.
    func slot(of id: Int64) -> Int? { slots.slot(of: id) }

    /// The value in `slot`: the `slot`-th value appended since ``removeAll()``, while none
    /// was removed.
    func value(atSlot slot: Int) -> Item { values[slot] }

    /// A comparison of these values with others, one item at a time (``Comparison/compare(_:)``).
    func comparison() -> Comparison { Comparison(values: self) }

    /// Which items have another value than in a payload: every item compared is compared
    /// where it is stored (``ResultsItem/_equalItems(_:_:)``: in code not specialized for the
    /// item type, `==` would copy both), into a table of flags by slot.
    struct Comparison {
        fileprivate let values: ItemPayload
        /// By slot of `values`: whether the item compared has another value (true until
        /// compared).
        private var changed: [Bool]

        fileprivate init(values: ItemPayload) {
            self.values = values
            changed = [Bool](repeating: true, count: values.count)
        }

        /// Compares `item` with the value of its id.
        mutating func compare(_ item: Item) {
            guard let slot = values.slots.slot(of: item.objectID.rawValue) else { return }
            changed[slot] = withUnsafePointer(to: item) { theirs in
                values.values.withUnsafeBufferPointer { !Item._equalItems($0.baseAddress! + slot, theirs) }
            }
        }

        /// The test of whether the item of an id has another value than in the payload (true
        /// when the payload has none, or it was not compared).
        var differs: (Int64) -> Bool { flags.differs }

        /// What the comparisons found, without the values.
        var flags: ChangedValues { ChangedValues(slots: values.slots, changed: changed) }
    }

    /// Checks that each value is stored under its own id (debug builds only).
    func _checkInvariants() {
        #if DEBUG
        precondition(values.count == slots.count, "values and slots out of step")
        for (id, item) in zip(slots.ids, values) {
            precondition(item.objectID.rawValue == id, "item \(item.objectID) stored under id \(id)")
            precondition(slots.slot(of: id) != nil, "item \(id) has no slot")
        }
        #endif
    }
}

/// What a comparison of values by id found (``ItemPayload/Comparison``): for each id of the
/// payload compared with, whether the item compared had another value.
struct ChangedValues: Sendable {
    fileprivate let slots: IDSlots
    /// By slot: another value (true until compared).
    fileprivate let changed: [Bool]

    /// The test of whether the item of an id has another value (true for an id without a
    /// slot, or not compared).
    var differs: (Int64) -> Bool {
        let slots = slots, changed = changed
        return { id in slots.slot(of: id).map { changed[$0] } ?? true }
    }
}
