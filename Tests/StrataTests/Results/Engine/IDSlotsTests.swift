import Foundation
import Testing

@testable import Strata

/// The id → slot table on its own: random appends (the next rowid, ids inside and far
/// outside the direct range, the extremes of `Int64`), removals (the last slot moves into
/// the freed one) and clears, with a direct table over a dense range, over a range too wide
/// for one, and without a range, against a plain dictionary. After every step every id ever
/// used must find its slot, and `ids[slot]` must be that id. Seeded; the seed is printed.
@Suite("Id slots, alone")
struct IDSlotsTests {
    enum Range: CaseIterable { case dense, wide, none }

    @Test("random appends, removals and clears keep every id at its slot", arguments: Range.allCases)
    func againstDictionary(_ range: Range) throws {
        let seed = partTestSeed("IDSlotsTests.againstDictionary(\(range))")
        var random = SeededGenerator(seed: seed)
        var slots = IDSlots()
        switch range {
        case .dense: slots.reserveCapacity(100, ids: 1...100)
        case .wide: slots.reserveCapacity(100, ids: 1...1_000_000)
        case .none: slots.reserveCapacity(100)
        }
        var reference: [Int64: Int] = [:]  // id → slot
        var order: [Int64] = []  // the id in each slot, as the owner's arrays hold it
        var used = Set<Int64>()
        var nextRowID: Int64 = 1
        for step in 0..<3_000 {
            let context = "seed \(seed), \(range), step \(step)"
            let id: Int64
            switch Int.random(in: 0..<20, using: &random) {
            case 0..<7:
                id = nextRowID  // a new row takes the next rowid
                nextRowID += 1
            case 7..<9:
                id = Int64.random(in: -5...250, using: &random)
            case 9:
                id = [Int64.min, Int64.max, Int64.min + 1, Int64.max - 1, 0].randomElement(using: &random)!
            case 10..<17:
                guard let gone = order.randomElement(using: &random) else { continue }
                let removed = slots.remove(gone)
                let freed = try #require(removed, "\(context): \(gone) had no slot")
                #expect(freed.slot == reference[gone] && freed.last == order.count - 1, "\(context)")
                // The owner's arrays: the last element moves into the freed slot.
                order[freed.slot] = order[freed.last]
                order.removeLast()
                reference[gone] = nil
                if freed.slot < order.count { reference[order[freed.slot]] = freed.slot }
                let again = slots.remove(gone)
                #expect(again == nil, "\(context): removed twice")
                continue
            case 17:
                slots.removeAll()
                reference.removeAll()
                order.removeAll()
                continue
            default:
                let probe = Int64.random(in: -10...(nextRowID + 10), using: &random)
                #expect(slots.slot(of: probe) == reference[probe], "\(context): probe \(probe)")
                continue
            }
            guard reference[id] == nil else { continue }
            let slot = slots.append(id)
            #expect(slot == order.count, "\(context): \(id) got slot \(slot)")
            reference[id] = slot
            order.append(id)
            used.insert(id)
            #expect(slots.count == reference.count, "\(context)")
            #expect(Array(slots.ids) == order, "\(context): ids by slot")
            let wrong = used.filter { slots.slot(of: $0) != reference[$0] }
            #expect(wrong.isEmpty, "\(context): slots of \(wrong.prefix(5)) differ")
        }
        let wrong = used.filter { slots.slot(of: $0) != reference[$0] }
        #expect(wrong.isEmpty && Array(slots.ids) == order, "seed \(seed): final state differs")
    }

    @Test("a direct table that ends at Int64.max neither traps nor grows past it")
    func rangeAtTheTopOfInt64() {
        var slots = IDSlots()
        slots.reserveCapacity(4, ids: (Int64.max - 3)...Int64.max)
        var expected: [Int64] = []
        for id in [Int64.max, Int64.max - 3, Int64.max - 1, 5, Int64.min, Int64.max - 2] {
            #expect(slots.append(id) == expected.count)
            expected.append(id)
        }
        for (slot, id) in expected.enumerated() { #expect(slots.slot(of: id) == slot) }
        #expect(slots.remove(Int64.max)?.slot == 0)
        #expect(slots.slot(of: Int64.max) == nil && slots.slot(of: Int64.max - 2) == 0)

        var single = IDSlots()
        single.reserveCapacity(1, ids: Int64.max...Int64.max)
        #expect(single.append(Int64.max) == 0)
        #expect(single.append(17) == 1)  // a random rowid, once the largest is taken
        #expect(single.slot(of: 17) == 1 && single.slot(of: Int64.max) == 0)
    }
}
