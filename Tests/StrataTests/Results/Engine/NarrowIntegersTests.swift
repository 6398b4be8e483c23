import Foundation
import Testing

@testable import Strata

/// Integers in the narrowest width on their own: random appends, replacements, removals,
/// holes, relayouts and clears of values at the edges of every width, against a plain array;
/// after every step each value reads back exactly, and the width is the narrowest that holds
/// every value stored since the last clear. Seeded; the seed is printed.
@Suite("Narrow integers, alone")
struct NarrowIntegersTests {
    static let edges: [Int64] = [
        0, 1, -1, 127, -128, 128, -129, 32_767, -32_768, 32_768, -32_769,
        Int64(Int32.max), Int64(Int32.min), Int64(Int32.max) + 1, Int64(Int32.min) - 1, Int64.max, Int64.min,
    ]

    static func width(of value: Int64) -> Int {
        if Int64(Int8.min)...Int64(Int8.max) ~= value { return 1 }
        if Int64(Int16.min)...Int64(Int16.max) ~= value { return 2 }
        if Int64(Int32.min)...Int64(Int32.max) ~= value { return 4 }
        return 8
    }

    @Test("random operations read back what a plain array holds, in the narrowest width", arguments: [0, 1, 2, 3])
    func againstArray(_ run: Int) {
        let seed = partTestSeed("NarrowIntegersTests.againstArray(\(run))")
        var random = SeededGenerator(seed: seed)
        var integers = NarrowIntegers()
        var reference: [Int64] = []
        var widest = 1  // the narrowest width that holds every value stored since the last clear
        var widths = Set<Int>()
        for step in 0..<3_000 {
            let context = "seed \(seed), step \(step)"
            // Mostly small values, so that widening happens late and in steps.
            let value = Int.random(in: 0..<40, using: &random) == 0
                ? Self.edges.randomElement(using: &random)! : Int64.random(in: -100...100, using: &random)
            switch Int.random(in: 0..<20, using: &random) {
            case 0..<9:
                integers.append(value)
                reference.append(value)
                widest = max(widest, Self.width(of: value))
            case 9..<13:
                guard !reference.isEmpty else { continue }
                let slot = Int.random(in: reference.indices, using: &random)
                integers.set(value, at: slot)
                reference[slot] = value
                widest = max(widest, Self.width(of: value))
            case 13..<16:
                guard !reference.isEmpty else { continue }
                let slot = Int.random(in: reference.indices, using: &random)
                integers.apply(.moved(slot: slot, last: reference.count - 1))
                reference[slot] = reference[reference.count - 1]
                reference.removeLast()
            case 16:
                guard !reference.isEmpty else { continue }
                let slot = Int.random(in: reference.indices, using: &random)
                integers.apply(.hole(slot))
                reference[slot] = 0
            case 17:
                var sources = ContiguousArray<Int32>(reference.indices.map(Int32.init))
                sources.shuffle(using: &random)
                sources.append(-1)
                integers.apply(ItemSlots.Relayout(sources: sources, capacity: sources.count))
                reference = sources.map { $0 < 0 ? 0 : reference[Int($0)] }
            case 18:
                integers.removeAll()
                reference.removeAll()
                widest = 1
            default:
                integers.reserveCapacity(Int.random(in: 0...64, using: &random))
            }
            #expect(integers.count == reference.count, "\(context): count")
            let wrong = reference.indices.filter { integers[$0] != reference[$0] }
            #expect(wrong.isEmpty, "\(context): slots \(wrong.prefix(5)) differ")
            #expect(integers.bytesPerValue == widest, "\(context): \(integers.bytesPerValue) bytes a value, \(widest) needed")
            widths.insert(integers.bytesPerValue)
        }
        #expect(widths.count > 1, "seed \(seed): never widened")
    }

    @Test("section slots read back, the hidden one included, in one byte until a slot needs more")
    func sectionSlots() {
        var column = SectionSlotColumn()
        let slots: [UInt32] = [0, SectionSlots.hiddenSlot, 5, 126, SectionSlots.hiddenSlot]
        for (index, slot) in slots.enumerated() { column.place(slot, at: index) }
        #expect((0..<slots.count).map { column[$0] } == slots && column.bytesPerItem == 1)
        column.place(128, at: 7)  // past the end: a hole at 5 and 6
        #expect(column.count == 8 && column[7] == 128 && column.bytesPerItem == 2)
        column[1] = 40_000
        #expect(column[1] == 40_000 && column[4] == SectionSlots.hiddenSlot && column.bytesPerItem == 4)
        column.apply(ItemSlots.Relayout(sources: [4, 7, -1, 1], capacity: 4))
        #expect(column.count == 4 && column[0] == SectionSlots.hiddenSlot && column[1] == 128 && column[3] == 40_000)
        column.removeAll()
        column.place(3, at: 0)
        #expect(column[0] == 3 && column.bytesPerItem == 1)
    }
}
