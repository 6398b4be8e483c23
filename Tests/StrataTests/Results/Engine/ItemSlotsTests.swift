import Foundation
import Testing

@testable import Strata

/// A key store's item slots on their own, with an owner's array beside them as a key store
/// keeps one: random inserts (the next rowid, ids inside and just past the range, ids far
/// outside it and the extremes of `Int64`), removals, settles (the end of a build, which may
/// lay slots out by id) and clears, against a plain dictionary of each id's element. After
/// every step: every id ever used finds its slot or none as the reference says, the owner's
/// array has one element a slot and each present id's element at its slot, and the ids
/// listed are exactly the present ones. Seeded; the seed is printed.
@Suite("Item slots, alone")
struct ItemSlotsTests {
    enum Start: CaseIterable { case denseRange, wideRange, noRange }

    @Test("random inserts, removals, settles and clears keep every item's element at its slot", arguments: Start.allCases)
    func againstDictionary(_ start: Start) throws {
        for run in 0..<4 {
            let seed = partTestSeed("ItemSlotsTests.againstDictionary(\(start), \(run))")
            try check(start, seed: seed)
        }
    }

    private func check(_ start: Start, seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        var slots = ItemSlots()
        func reserve() {
            switch start {
            case .denseRange: slots.reserveCapacity(3_000, ids: 1...3_000)
            case .wideRange: slots.reserveCapacity(3_000, ids: 1...1_000_000)
            case .noRange: slots.reserveCapacity(3_000, ids: nil)
            }
        }
        reserve()
        var owner = ContiguousArray<Int64>()  // each slot's element: its id (the filler: -1)
        var reference: [Int64: Int64] = [:]
        var used = Set<Int64>()
        var nextRowID: Int64 = 1
        var sawByID = false, sawRelayoutOut = false
        for step in 0..<4_000 {
            let context = "seed \(seed), \(start), step \(step)"
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<55:
                // A build's many rows, or new rows: mostly the next rowids, sometimes a gap,
                // rarely an id far away.
                let id: Int64
                switch Int.random(in: 0..<100, using: &random) {
                case 0..<85:
                    id = nextRowID
                    nextRowID += Int64.random(in: 1...(Bool.random(using: &random) ? 1 : 3), using: &random)
                case 85..<97: id = Int64.random(in: -5...(nextRowID + 40), using: &random)
                default: id = [Int64.min, Int64.max, Int64.min + 1, Int64.max - 1, 5_000_000].randomElement(using: &random)!
                }
                guard reference[id] == nil else { continue }
                let (slot, relayout) = slots.insert(id)
                if let relayout {
                    owner.apply(relayout, filler: -1)
                    if !slots.isByID { sawRelayoutOut = true }
                }
                owner.place(id, at: slot, filler: -1)
                reference[id] = id
                used.insert(id)
            case 55..<85:
                guard let gone = reference.keys.randomElement(using: &random) else { continue }
                let removed = slots.remove(gone)
                let removal = try #require(removed, "\(context): \(gone) had no slot")
                if case .relayout = removal { sawRelayoutOut = true }
                owner.apply(removal, filler: -1)
                reference[gone] = nil
                let again = slots.remove(gone)
                #expect(again == nil, "\(context): removed twice")
            case 85..<95:
                if let relayout = slots.settle() { owner.apply(relayout, filler: -1) }
                if slots.isByID { sawByID = true }
            case 95..<97:
                slots.removeAll()
                owner.removeAll()
                reference.removeAll()
                if Bool.random(using: &random) { nextRowID = 1 }
            default:
                let probe = Int64.random(in: -10...(nextRowID + 10), using: &random)
                #expect((slots.slot(of: probe) != nil) == (reference[probe] != nil), "\(context): probe \(probe)")
                continue
            }
            try verify(slots, owner, reference, used, context)
        }
        // A last settle on whatever is left, then checked once more.
        if let relayout = slots.settle() { owner.apply(relayout, filler: -1) }
        try verify(slots, owner, reference, used, "seed \(seed), \(start), end")
        if start != .wideRange { #expect(sawByID, "seed \(seed): slots were never laid out by id") }
        #expect(!sawByID || sawRelayoutOut, "seed \(seed): slots by id were never left")
    }

    private func verify(
        _ slots: ItemSlots, _ owner: ContiguousArray<Int64>, _ reference: [Int64: Int64], _ used: Set<Int64>, _ context: String
    ) throws {
        #expect(slots.count == reference.count, "\(context): count")
        try #require(owner.count == slots.slotCount, "\(context): the owner's array has \(owner.count) elements, \(slots.slotCount) slots")
        for id in used {
            let slot = slots.slot(of: id)
            if let element = reference[id] {
                let found = try #require(slot, "\(context): \(id) has no slot")
                try #require(owner[found] == element, "\(context): \(id)'s element is \(owner[found]) at slot \(found)")
            } else {
                try #require(slot == nil, "\(context): removed \(id) still has slot \(slot!)")
            }
        }
        var listed: [Int64: Int] = [:]
        slots.forEach { id, slot in listed[id] = slot }
        #expect(Set(listed.keys) == Set(reference.keys), "\(context): the ids listed differ")
        #expect(Set(slots.ids) == Set(reference.keys) && slots.ids.count == reference.count, "\(context): ids")
        for (id, slot) in listed { #expect(slots.slot(of: id) == slot, "\(context): \(id) listed at \(slot)") }
    }

    @Test("a table's rows settle by id; a row far away and a mostly emptied range go back to dense slots")
    func layouts() throws {
        var slots = ItemSlots()
        var owner = ContiguousArray<Int64>()
        slots.reserveCapacity(10_000, ids: 1...10_000)
        for id in Int64(1)...10_000 where id % 10 != 0 {  // 90 % of a table
            let (slot, relayout) = slots.insert(id)
            #expect(relayout == nil)
            owner.place(id, at: slot, filler: -1)
        }
        #expect(!slots.isByID)
        if let relayout = slots.settle() { owner.apply(relayout, filler: -1) }
        #expect(slots.isByID && slots.slotCount == 9_999 && owner.count == 9_999)
        #expect(slots.slot(of: 1) == 0 && slots.slot(of: 10) == nil && slots.slot(of: 9_999) == 9_998)
        // The next rowid grows the range.
        let next = slots.insert(10_001)
        #expect(next.slot == 10_000 && next.relayout == nil)
        owner.place(10_001, at: next.slot, filler: -1)
        #expect(owner[9_999] == -1 && owner[10_000] == 10_001)
        // A row far away: dense slots again, every element moved with its id.
        let far = slots.insert(1_000_000)
        let relayout = try #require(far.relayout)
        owner.apply(relayout, filler: -1)
        owner.place(1_000_000, at: far.slot, filler: -1)
        #expect(!slots.isByID && owner.count == slots.count && slots.count == 9_002)
        for id in [Int64(1), 9_999, 10_001, 1_000_000] { #expect(owner[slots.slot(of: id)!] == id) }
        // Back by id once the far row goes and the build settles; then removals to under half.
        _ = slots.remove(1_000_000).map { owner.apply($0, filler: -1) }
        if let relayout = slots.settle() { owner.apply(relayout, filler: -1) }
        #expect(slots.isByID)
        var leftByID = false
        for id in Int64(1)...6_000 where slots.slot(of: id) != nil {
            let removal = slots.remove(id)!
            owner.apply(removal, filler: -1)
            if case .relayout = removal { leftByID = true }
        }
        #expect(leftByID && !slots.isByID && owner.count == slots.count)
        for id in Int64(6_001)...10_001 where id % 10 != 0 { #expect(owner[slots.slot(of: id)!] == id) }

        // Ids spread wider (one row in ten, as a filter keeps them): dense slots after a build.
        var sparse = ItemSlots()
        sparse.reserveCapacity(1_000, ids: 1...10_000)
        for id in stride(from: Int64(1), through: 10_000, by: 10) { _ = sparse.insert(id) }
        let settled = sparse.settle()
        #expect(settled == nil && !sparse.isByID && sparse.slot(of: 9_991) == 999)
    }
}

extension ContiguousArray {
    /// Puts `element` at `slot` as a key store's array takes it (``ItemSlots/insert(_:)``):
    /// replaces, appends, or appends after fillers.
    mutating func place(_ element: Element, at slot: Int, filler: Element) {
        if slot < count {
            self[slot] = element
            return
        }
        if slot > count { append(contentsOf: repeatElement(filler, count: slot - count)) }
        append(element)
    }
}
