import Foundation
import StrataTestSupport
import Testing

@testable import Strata

/// The values a commit's refetch takes instead of decoding rows, laid out by id on another
/// thread (``HeldValues``), against a plain dictionary: seeded random ids (dense, with gaps,
/// negative), every value taken once in a random order, ids outside the range or without a
/// value, and a range too sparse for a slot per id.
@Suite("Held values, alone")
struct HeldValuesTests {
    static let day = Date(timeIntervalSince1970: 1_780_000_000)

    static func note(_ id: Int64, _ random: inout SeededGenerator) -> Note {
        Note(id: Note.ID(id), title: "n\(id).\(random.int(0...999))", body: "b", updatedAt: day)
    }

    @Test("each held value is taken once, by its id, whatever the order", arguments: 0..<6)
    func againstDictionary(_ round: Int) throws {
        let seed = partTestSeed("HeldValuesTests.againstDictionary \(round)")
        var random = SeededGenerator(seed: seed)
        let low = Int64(random.int(-50...1_000))
        let width = random.int(1...2_000)
        var reference: [Int64: Note] = [:]
        for id in low..<(low + Int64(width)) where random.int(0...3) != 0 { reference[id] = Self.note(id, &random) }
        let values = Array(reference.values).shuffled(using: &random)
        // The range asked for may be narrower or wider than the values' ids.
        let range = (low + Int64(random.int(0...3)))...(low + Int64(width) - 1 + Int64(random.int(-3...30)))
        let held = try #require(HeldValues<Note>(range: range, count: max(values.count, 1)) { body in values.forEach(body) })
        held.waitUntilLaidOut()
        #expect(held.isReady, "seed \(seed)")
        var asked = Array((low - 5)...(low + Int64(width) + 40))
        asked.shuffle(using: &random)
        for id in asked {
            let expected = range.contains(id) ? reference[id] : nil
            #expect(held.take(id) == expected, "seed \(seed): id \(id)")
            #expect(held.take(id) == nil, "seed \(seed): id \(id) taken twice")
        }
    }

    @Test("ids much wider than the values held get no slots")
    func sparseIDs() {
        #expect(HeldValues<Note>(range: 1...1_000_000, count: 10) { _ in } == nil)
        #expect(HeldValues<Note>(range: nil, count: 10) { _ in } == nil)
        #expect(HeldValues<Note>(range: 1...10, count: 0) { _ in } == nil)
        #expect(HeldValues<Note>(range: 1...3_000, count: 1_000) { _ in } != nil)
    }

    @Test("released while its values are laid out: waits for them, then frees them")
    func releasedWhileLayingOut() {
        var random = SeededGenerator(seed: 7)
        let values = (1...5_000).map { Self.note(Int64($0), &random) }
        for _ in 0..<20 {
            _ = HeldValues<Note>(range: 1...5_000, count: values.count) { body in values.forEach(body) }
        }
    }
}
