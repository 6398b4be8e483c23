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
