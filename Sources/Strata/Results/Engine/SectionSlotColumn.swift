/// Each item's section slot (``SectionSlots``), by item slot (``ItemSlots``), in the fewest
/// bytes that hold every one (``NarrowIntegers``): a list of up to 128 sections keeps a byte
/// an item, one of up to 32,768 two. The hidden slot is stored as -1.
struct SectionSlotColumn: Sendable {
    private var values = NarrowIntegers()

    init() {}

    var count: Int { values.count }
    var capacity: Int { values.capacity }
    /// The bytes each item takes now (for tests and measurements).
    var bytesPerItem: Int { values.bytesPerValue }

    mutating func reserveCapacity(_ count: Int) { values.reserveCapacity(count) }
    mutating func removeAll() { values.removeAll() }

    @inline(__always)
    private static func stored(_ sectionSlot: UInt32) -> Int64 {
        sectionSlot == SectionSlots.hiddenSlot ? -1 : Int64(sectionSlot)
    }

    subscript(slot: Int) -> UInt32 {
        @inline(__always) get {
            let value = values[slot]
            return value < 0 ? SectionSlots.hiddenSlot : UInt32(truncatingIfNeeded: value)
        }
        set { values.set(Self.stored(newValue), at: slot) }
    }

    /// Puts `sectionSlot` at `slot` (``ItemSlots/insert(_:)``): replaces, appends, or appends
    /// after holes (which read as section slot 0 and are never read).
    mutating func place(_ sectionSlot: UInt32, at slot: Int) {
        if slot < values.count {
            values.set(Self.stored(sectionSlot), at: slot)
            return
        }
        if slot > values.count { values.appendZeros(slot - values.count) }
        values.append(Self.stored(sectionSlot))
    }

    mutating func apply(_ removal: ItemSlots.Removal) { values.apply(removal) }
    mutating func apply(_ relayout: ItemSlots.Relayout) { values.apply(relayout) }
}
