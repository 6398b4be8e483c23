/// The slots of a key store's items (``ItemSections``): what a store keeps of an item lives at
/// its slot in plain arrays, the owner's. Two layouts, chosen by how the ids lie:
///
/// - **By id** (``settle()`` chooses it after a build when the ids fill at least four fifths of
///   the range from the smallest to the largest): an item's slot is its id's offset from the
///   smallest, so no table maps ids to slots and none maps slots back to ids — a bit per id
///   says which are present. The owner's arrays hold a filler at the slots of ids that are
///   not (holes). Rowids are handed out in order, so the rows of a table, or most of them,
///   are this case: 12 bytes an item less than the dense layout.
/// - **Dense** (``IDSlots``: slots `0..<count`, a table from id to slot and an array back),
///   for ids spread wider, and during a build.
///
/// The layout changes only with an order to the owner (``Relayout``): when a build settles,
/// when an id comes that the by-id range cannot take without falling under half full (a row
/// far outside it), and when removals leave the range less than half full. The owner applies
/// the relayout before anything else the same call returns.
struct ItemSlots: Sendable {
    /// Where each item's elements move: for each new slot, the old slot of its element, or
    /// -1 for a hole (the owner puts its filler there).
    struct Relayout: Sendable {
        var sources: ContiguousArray<Int32>
        /// The room the owner's arrays should keep (new rows take the next rowids).
        var capacity: Int
    }

    /// What the owner does to its arrays when an item goes.
    enum Removal: Sendable {
        /// The element in `last` (the last slot) moves into `slot`, and the last is removed.
        case moved(slot: Int, last: Int)
        /// The slot becomes a hole: the owner may put its filler there (to release what the
        /// element held); the arrays keep their length.
        case hole(Int)
        /// The layout changed (``Relayout``); the item is not in the new one.
        case relayout(Relayout)
    }

    private enum Layout { case dense, byID }

    private var layout = Layout.dense
    private var dense = IDSlots()
    /// By id: the id of slot 0, the number of slots (the owner's arrays' length), a bit per
    /// slot for the ids present, and how many are.
    private var base: Int64 = 0
    private var width = 0
    private var present: ContiguousArray<UInt64> = []
    private var presentCount = 0

    init() {}

    /// The number of items.
    var count: Int { layout == .dense ? dense.count : presentCount }
    /// The length of the owner's arrays.
    var slotCount: Int { layout == .dense ? dense.count : width }
    var isEmptyCapacity: Bool { layout == .dense ? dense.isEmptyCapacity : false }
    /// Whether slots are ids' offsets (for tests and the docs' measurements).
    var isByID: Bool { layout == .byID }

    mutating func reserveCapacity(_ count: Int, ids: ClosedRange<Int64>?) {
        if layout == .dense { dense.reserveCapacity(count, ids: ids) }
    }

    /// Forgets every item; the next are placed densely until ``settle()`` (a by-id range
    /// becomes the dense layout's direct table, so that a refetch of the same rows finds
    /// their slots without hashing).
    mutating func removeAll() {
        switch layout {
        case .dense:
            dense.removeAll()
        case .byID:
            dense = IDSlots()
            if width > 0 { dense.reserveCapacity(width, ids: range) }
            layout = .dense
            present = []
            presentCount = 0
            width = 0
        }
    }

    /// By id: the ids the slots stand for (nil when there are none).
    private var range: ClosedRange<Int64>? {
        guard width > 0, case let (last, overflowed) = base.addingReportingOverflow(Int64(width - 1)), !overflowed else { return nil }
        return base...last
    }

    @inline(__always)
    private func offset(of id: Int64) -> Int? {
        let (offset, overflowed) = id.subtractingReportingOverflow(base)
        guard !overflowed, offset >= 0, offset < Int64(width) else { return nil }
        return Int(offset)
    }

    @inline(__always)
    private func isPresent(_ slot: Int) -> Bool { present[slot >> 6] & (1 << UInt64(slot & 63)) != 0 }

    /// The slot of `id`, nil when it has none.
    @inline(__always)
    func slot(of id: Int64) -> Int? {
        switch layout {
        case .dense: return dense.slot(of: id)
        case .byID:
            guard let slot = offset(of: id), isPresent(slot) else { return nil }
            return slot
        }
    }

    /// Every item's id, in slot order.
    var ids: [Int64] {
        switch layout {
        case .dense: return Array(dense.ids)
        case .byID:
            var ids: [Int64] = []
            ids.reserveCapacity(presentCount)
            forEach { id, _ in ids.append(id) }
            return ids
        }
    }

    /// Calls `body` with every item's id and slot, in slot order.
    func forEach(_ body: (Int64, Int) -> Void) {
        switch layout {
        case .dense:
            for (slot, id) in dense.ids.enumerated() { body(id, slot) }
        case .byID:
            for (word, bits) in present.enumerated() where bits != 0 {
                var remaining = bits
                while remaining != 0 {
                    let slot = word << 6 + remaining.trailingZeroBitCount
                    body(base + Int64(slot), slot)
                    remaining &= remaining - 1
                }
            }
        }
    }

    /// A slot for `id`, which has none. The owner applies `relayout` first, if any, then puts
    /// the item's elements at `slot`: at the end of its arrays when `slot` is their length, after
    /// fillers when it is past it.
    mutating func insert(_ id: Int64) -> (slot: Int, relayout: Relayout?) {
        assert(slot(of: id) == nil, "id \(id) has a slot already")
        switch layout {
        case .dense:
            return (dense.append(id), nil)
        case .byID:
            if let slot = offset(of: id) {
                mark(slot, true)
                presentCount += 1
                return (slot, nil)
            }
            let (offset, overflowed) = id.subtractingReportingOverflow(base)
            if !overflowed, offset >= Int64(width), offset < Int64(Int32.max), Self.fits(count: presentCount + 1, width: Int(offset) + 1) {
                // A new row past the range (the next rowid): the range grows with the table.
                width = Int(offset) + 1
                let words = (width + 63) >> 6
                if present.count < words { present.append(contentsOf: repeatElement(0, count: words - present.count)) }
                mark(Int(offset), true)
                presentCount += 1
                return (Int(offset), nil)
            }
            let relayout = makeDense(adding: 1)
            return (dense.append(id), relayout)
        }
    }

    /// Forgets `id`; nil when it has no slot.
    mutating func remove(_ id: Int64) -> Removal? {
        switch layout {
        case .dense:
            return dense.remove(id).map { .moved(slot: $0.slot, last: $0.last) }
        case .byID:
            guard let slot = slot(of: id) else { return nil }
            mark(slot, false)
            presentCount -= 1
            if width > Self.minimumWidth, presentCount < width / 2 { return .relayout(makeDense(adding: 0)) }
            return .hole(slot)
        }
    }

    /// After a build: slots by id when the ids lie close enough (see the type), else
    /// unchanged. Returns the relayout the owner applies.
    mutating func settle() -> Relayout? {
        guard layout == .dense, dense.count > 0 else { return nil }
        var low = Int64.max, high = Int64.min
        for id in dense.ids {
            low = Swift.min(low, id)
            high = Swift.max(high, id)
        }
        let (span, overflowed) = high.subtractingReportingOverflow(low)
        guard !overflowed, span < Int64(Int32.max), Self.fits(count: dense.count, width: Int(span) + 1) else { return nil }
        base = low
        width = Int(span) + 1
        present = ContiguousArray(repeating: 0, count: (width + 63) >> 6)
        var sources = ContiguousArray<Int32>(repeating: -1, count: width)
        for (slot, id) in dense.ids.enumerated() {
            let offset = Int(id - low)
            sources[offset] = Int32(slot)
            mark(offset, true)
        }
        presentCount = dense.count
        dense = IDSlots()
        layout = .byID
        return Relayout(sources: sources, capacity: Self.room(width))
    }

    /// Leaves the by-id layout: the present ids take dense slots in id order, with room for
    /// `extra` more.
    private mutating func makeDense(adding extra: Int) -> Relayout {
        var next = IDSlots()
        // The range the ids are in, so that they find their slots in a plain array when it
        // is dense enough (a far row goes to the table's dictionary).
        next.reserveCapacity(presentCount + extra, ids: range)
        var sources = ContiguousArray<Int32>()
        sources.reserveCapacity(presentCount)
        forEach { id, slot in
            _ = next.append(id)
            sources.append(Int32(slot))
        }
        dense = next
        layout = .dense
        present = []
        presentCount = 0
        width = 0
        return Relayout(sources: sources, capacity: sources.count + extra)
    }

    private mutating func mark(_ slot: Int, _ isPresent: Bool) {
        let bit: UInt64 = 1 << UInt64(slot & 63)
        if isPresent { present[slot >> 6] |= bit } else { present[slot >> 6] &= ~bit }
    }

    /// Below this many slots a by-id range is never left for being sparse.
    private static var minimumWidth: Int { 1_024 }

    /// Whether `count` ids in a range of `width` are close enough for slots by id: at least
    /// about four fifths full, where the dense layout's 12 bytes an item would cost more than
    /// the holes (a hole costs what the owner keeps of an item, about 30 bytes with sort keys).
    static func fits(count: Int, width: Int) -> Bool {
        width <= count + count / 4 + 64
    }

    /// The room to keep for `width` slots: new rows take the next rowids, so a sixteenth more
    /// (the arrays would otherwise double at the first new row).
    private static func room(_ width: Int) -> Int { width + width / 16 + 64 }
}

extension ContiguousArray {
    /// Applies an ``ItemSlots/Relayout``: `filler` in holes.
    mutating func apply(_ relayout: ItemSlots.Relayout, filler: Element) {
        var moved = ContiguousArray<Element>()
        moved.reserveCapacity(Swift.max(relayout.capacity, relayout.sources.count))
        for source in relayout.sources { moved.append(source < 0 ? filler : self[Int(source)]) }
        self = moved
    }

    /// Applies an ``ItemSlots/Removal``: `filler` in a hole.
    mutating func apply(_ removal: ItemSlots.Removal, filler: Element) {
        switch removal {
        case .moved(let slot, let last): removeSlot((slot, last))
        case .hole(let slot): self[slot] = filler
        case .relayout(let relayout): apply(relayout, filler: filler)
        }
    }
}
