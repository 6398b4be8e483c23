import Foundation
import GRDB
import Testing

@testable import Strata

/// The typed column of sort keys on its own: random appends, replacements, placements at
/// and past the end, removals (the last slot moved into the freed one, as ``IDSlots`` frees
/// slots, or a hole, as slots by id free them), relayouts (``ItemSlots``) and clears, against a plain
/// array of `DatabaseValue`s. Values of every storage class with their edges; most runs keep
/// to one class for a while, so that the typed storages are exercised before a value of
/// another class widens the column. After every step every slot must read back exactly the
/// reference's value (storage class and bits, not `==`, which takes 1 and 1.0 for equal).
/// Seeded; the seed is printed and in every failure.
@Suite("Sort key column, alone")
struct SortKeyColumnTests {
    static func same(_ lhs: DatabaseValue, _ rhs: DatabaseValue) -> Bool {
        switch (lhs.storage, rhs.storage) {
        case (.null, .null): true
        case (.int64(let a), .int64(let b)): a == b
        case (.double(let a), .double(let b)): a.bitPattern == b.bitPattern
        case (.string(let a), .string(let b)): Array(a.utf8) == Array(b.utf8)
        case (.blob(let a), .blob(let b)): a == b
        default: false
        }
    }

    static func value(of kind: Int, _ random: inout SeededGenerator) -> DatabaseValue {
        switch kind {
        case 0:
            [
                Int64.min, -1, 0, 1, Int64.max, Int64.random(in: -1_000...1_000, using: &random),
                127, 128, -128, -129, 32_767, 32_768, -32_769, Int64(Int32.max), Int64(Int32.max) + 1, Int64(Int32.min) - 1,
            ].randomElement(using: &random)!.databaseValue
        case 1: ["", "a", "é", "a\u{0}b", "a longer title than fifteen bytes", "n\(Int.random(in: 0...99, using: &random))"].randomElement(using: &random)!.databaseValue
        case 2: [-0.0, 0.0, 1.5, -.infinity, .infinity, .greatestFiniteMagnitude].randomElement(using: &random)!.databaseValue
        case 3: .null
        default: Data([0, 1, 2]).databaseValue
        }
    }

    @Test("random operations read back exactly what a plain array holds", arguments: [0, 1, 2, 3])
    func againstArray(_ run: Int) {
        let seed = partTestSeed("SortKeyColumnTests.againstArray(\(run))")
        var random = SeededGenerator(seed: seed)
        var column = SortKeyColumn()
        var reference: [DatabaseValue?] = []  // nil: a hole (its filler is not read)
        // The class most values take until a stray one comes (one in `stray` steps).
        var kind = Int.random(in: 0...2, using: &random)
        let stray = [20, 200, 2_000].randomElement(using: &random)!
        var sawTyped = false
        for step in 0..<3_000 {
            let context = "seed \(seed), step \(step)"
            let valueKind = Int.random(in: 0..<stray, using: &random) == 0 ? Int.random(in: 0...4, using: &random) : kind
            switch Int.random(in: 0..<24, using: &random) {
            case 0..<9:
                let value = Self.value(of: valueKind, &random)
                column.append(value)
                reference.append(value)
            case 20:
                // Placed at or past the end (slots by id: the next rowid, or one after a gap).
                let slot = reference.count + Int.random(in: 0...3, using: &random)
                let value = Self.value(of: valueKind, &random)
                column.place(value, at: slot)
                reference.append(contentsOf: repeatElement(nil, count: slot - reference.count))
                reference.append(value)
            case 21:
                guard !reference.isEmpty else { continue }
                let slot = Int.random(in: reference.indices, using: &random)
                column.apply(.hole(slot))
                reference[slot] = nil
            case 22:
                // A relayout: some items kept, in another order, with holes between.
                var sources = ContiguousArray<Int32>(reference.indices.filter { _ in Int.random(in: 0..<4, using: &random) > 0 }.map(Int32.init))
                sources.shuffle(using: &random)
                for _ in 0..<Int.random(in: 0...3, using: &random) { sources.insert(-1, at: Int.random(in: 0...sources.count, using: &random)) }
                column.apply(ItemSlots.Relayout(sources: sources, capacity: sources.count + 8))
                reference = sources.map { $0 < 0 ? nil : reference[Int($0)] }
            case 9..<13:
                guard !reference.isEmpty else { continue }
                let slot = Int.random(in: reference.indices, using: &random)
                let value = Self.value(of: valueKind, &random)
                column.set(value, at: slot)
                reference[slot] = value
            case 13..<18:
                guard !reference.isEmpty else { continue }
                let freed = (slot: Int.random(in: reference.indices, using: &random), last: reference.count - 1)
                column.apply(.moved(slot: freed.slot, last: freed.last))
                reference[freed.slot] = reference[freed.last]
                reference.removeLast()
            case 18:
                column.removeAll()
                reference.removeAll()
                kind = Int.random(in: 0...2, using: &random)
            default:
                column.reserveCapacity(Int.random(in: 0...64, using: &random))
            }
            #expect(column.count == reference.count, "\(context): \(column.count) values, \(reference.count) in the reference")
            let wrong = reference.indices.filter { slot in
                slot >= column.count || reference[slot].map { !Self.same(column[slot], $0) } ?? false
            }
            #expect(wrong.isEmpty, "\(context): slots \(wrong.prefix(5)) differ")
            if !reference.isEmpty && !column.holdsPlainValues { sawTyped = true }
        }
        #expect(sawTyped, "seed \(seed): the column was never typed")
    }

    @Test("a column of one storage class is stored by its type; another class widens it")
    func typedUntilWidened() {
        var column = SortKeyColumn()
        for integer in Int64(0)..<100 { column.append(integer.databaseValue) }
        #expect(!column.holdsPlainValues)
        column.set("text".databaseValue, at: 50)
        #expect(column.holdsPlainValues)
        #expect(Self.same(column[50], "text".databaseValue) && Self.same(column[49], 49.databaseValue))
        column.removeAll()
        column.append("a".databaseValue)
        #expect(!column.holdsPlainValues, "a cleared column chooses its storage again")
        column.append(.null)
        #expect(column.holdsPlainValues && Self.same(column[0], "a".databaseValue) && column[1].isNull)
    }

}
