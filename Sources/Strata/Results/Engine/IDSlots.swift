/// Item ids and the dense slots they hold, `0..<count`: what an id keeps beside it lives at
/// its slot in plain arrays, so that a results index of 100,000 items holds one small hash
/// table (id → slot) instead of a dictionary of records, whose buckets (up to 2.6 per item,
/// by Swift's load factor and power-of-two sizes) would each be as large as a record.
///
/// Removing an id moves the last id into its slot: the owner moves its arrays' last
/// element there too (``remove(_:)`` says which).
struct IDSlots {
    private var slotOfID: [Int64: Int32] = [:]
    /// The id in each slot.
    private(set) var ids: ContiguousArray<Int64> = []

    init() {}

    var count: Int { ids.count }
    var isEmptyCapacity: Bool { slotOfID.capacity == 0 }

    mutating func reserveCapacity(_ count: Int) {
        slotOfID.reserveCapacity(count)
        ids.reserveCapacity(count)
    }

    mutating func removeAll() {
        slotOfID.removeAll(keepingCapacity: true)
        ids.removeAll(keepingCapacity: true)
    }

    /// The slot of `id`, nil when it has none.
    @inline(__always)
    func slot(of id: Int64) -> Int? {
        slotOfID[id].map(Int.init)
    }

    /// Gives `id` the next slot, `count` (it must have none).
    mutating func append(_ id: Int64) -> Int {
        let slot = ids.count
        precondition(slot < Int(Int32.max), "too many items")
        slotOfID[id] = Int32(slot)
        ids.append(id)
        return slot
    }

    /// Frees the slot of `id`: the id in the last slot moves into it. Returns the freed
    /// slot and the last slot (equal when `id` was last); the owner moves its element at
    /// `last` to `slot` and removes its last element. Nil when `id` has no slot.
    mutating func remove(_ id: Int64) -> (slot: Int, last: Int)? {
        guard let found = slotOfID.removeValue(forKey: id) else { return nil }
        let slot = Int(found), last = ids.count - 1
        if slot != last {
            let moved = ids[last]
            ids[slot] = moved
            slotOfID[moved] = found
        }
        ids.removeLast()
        return (slot, last)
    }
}

extension ContiguousArray {
    /// Applies an ``IDSlots/remove(_:)``: the last element moves to `slot`.
    mutating func removeSlot(_ freed: (slot: Int, last: Int)) {
        if freed.slot != freed.last { self[freed.slot] = self[freed.last] }
        removeLast()
    }
}
