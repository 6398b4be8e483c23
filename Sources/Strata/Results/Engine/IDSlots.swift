/// Item ids and the dense slots they hold, `0..<count`: what an id keeps beside it lives at
/// its slot in plain arrays, so that a table of 100,000 values holds a small table (id →
/// slot) instead of a dictionary of records, whose buckets (up to 2.6 per item, by Swift's
/// load factor and power-of-two sizes) would each be as large as a record. Used by
/// ``ItemPayload``, and by ``ItemSlots`` for ids that do not lie close enough for slots by id.
///
/// Removing an id moves the last id into its slot: the owner moves its arrays' last
/// element there too (``remove(_:)`` says which).
///
/// Ids are SQLite rowids, which a table hands out in order: when the ids to index lie in a
/// range not much wider than their number (``reserveCapacity(_:ids:)``), an id finds its
/// slot at its offset in a plain array (4 bytes an id, no hashing); ids outside it, and all
/// ids otherwise, go to a dictionary. A new row that takes the id just past the range (the
/// next rowid, while every new row of the table enters the results) extends it while it
/// stays dense; others go to the dictionary, which costs hashing, not correctness.
struct IDSlots: Sendable {
    /// The slot + 1 of each id from `base` on (0: none).
    private var direct: ContiguousArray<UInt32> = []
    private var base: Int64 = 0
    /// Ids outside the direct range.
    private var overflow: [Int64: Int32] = [:]
    /// The id in each slot.
    private(set) var ids: ContiguousArray<Int64> = []

    init() {}

    var count: Int { ids.count }
    var isEmptyCapacity: Bool { ids.capacity == 0 }

    /// Makes room for `count` ids; `ids`, the range they are in, when known, makes a direct
    /// table if it is dense enough.
    mutating func reserveCapacity(_ count: Int, ids range: ClosedRange<Int64>? = nil) {
        ids.reserveCapacity(count)
        if let range, let width = Self.width(range), width <= Self.directLimit(count) {
            // Made before any id only: ids already placed stay where they are.
            if self.ids.isEmpty && (direct.isEmpty || base != range.lowerBound || direct.count < width) {
                base = range.lowerBound
                direct = ContiguousArray(repeating: 0, count: width)
            }
        } else {
            overflow.reserveCapacity(count)
        }
    }

    mutating func removeAll() {
        for id in ids {
            if let offset = directOffset(id) { direct[offset] = 0 }
        }
        overflow.removeAll(keepingCapacity: true)
        ids.removeAll(keepingCapacity: true)
    }

    /// The number of ids in `range`, nil when it is too large to count.
    private static func width(_ range: ClosedRange<Int64>) -> Int? {
        let (difference, overflowed) = range.upperBound.subtractingReportingOverflow(range.lowerBound)
        guard !overflowed, difference < Int64(Int32.max) else { return nil }
        return Int(difference) + 1
    }

    /// The widest direct table for `count` ids: 8 bytes an id at most, under the ~25 of a
    /// dictionary's buckets.
    private static func directLimit(_ count: Int) -> Int { 2 * count + 1_024 }

    @inline(__always)
    private func directOffset(_ id: Int64) -> Int? {
        let (offset, overflowed) = id.subtractingReportingOverflow(base)
        guard !overflowed, offset >= 0, offset < Int64(direct.count) else { return nil }
        return Int(offset)
    }

    /// The slot of `id`, nil when it has none.
    @inline(__always)
    func slot(of id: Int64) -> Int? {
        if let offset = directOffset(id) {
            let stored = direct[offset]
            return stored == 0 ? nil : Int(stored - 1)
        }
        return overflow[id].map(Int.init)
    }

    /// Gives `id` the next slot, `count` (it must have none).
    mutating func append(_ id: Int64) -> Int {
        // Not looked up in release builds: a build appends ids in sort order, and the
        // look-up was a cache miss per id.
        assert(slot(of: id) == nil, "id \(id) has a slot already")
        let slot = ids.count
        precondition(slot < Int(Int32.max), "too many items")
        if let offset = directOffset(id) {
            direct[offset] = UInt32(slot + 1)
        } else if !direct.isEmpty, case let (next, overflowed) = base.addingReportingOverflow(Int64(direct.count)),
            !overflowed, id == next, direct.count < Self.directLimit(slot + 1)
        {
            // The next rowid: the range grows with the table.
            direct.append(UInt32(slot + 1))
        } else {
            overflow[id] = Int32(slot)
        }
        ids.append(id)
        return slot
    }

    /// Frees the slot of `id`: the id in the last slot moves into it. Returns the freed
    /// slot and the last slot (equal when `id` was last); the owner moves its element at
    /// `last` to `slot` and removes its last element. Nil when `id` has no slot.
    mutating func remove(_ id: Int64) -> (slot: Int, last: Int)? {
        guard let slot = slot(of: id) else { return nil }
        setSlot(nil, of: id)
        let last = ids.count - 1
        if slot != last {
            let moved = ids[last]
            ids[slot] = moved
            setSlot(slot, of: moved)
        }
        ids.removeLast()
        return (slot, last)
    }

    private mutating func setSlot(_ slot: Int?, of id: Int64) {
        if let offset = directOffset(id) {
            direct[offset] = slot.map { UInt32($0 + 1) } ?? 0
        } else {
            overflow[id] = slot.map(Int32.init)
        }
    }
}

extension ContiguousArray {
    /// Applies an ``IDSlots/remove(_:)``: the last element moves to `slot`.
    mutating func removeSlot(_ freed: (slot: Int, last: Int)) {
        if freed.slot != freed.last { self[freed.slot] = self[freed.last] }
        removeLast()
    }
}
