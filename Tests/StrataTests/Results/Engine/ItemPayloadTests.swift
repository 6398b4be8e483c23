import Foundation
import GRDB
import Testing

@testable import Strata

/// The item payload on its own: random stores, updates, removals and clears against a plain
/// dictionary. After every step the payload's invariants are checked (each value under its
/// own id), it holds as many values as the reference, its iteration visits exactly the
/// reference's, and every id ever used reads the reference's value. Seeded; the seed is
/// printed and in every failure.
@Suite("Item payload, alone")
struct ItemPayloadTests {
    static func note(_ id: Int64, version: Int) -> Note {
        Note(id: Note.ID(id), title: "n\(id)-v\(version)", updatedAt: day)
    }

    @Test("random operations keep the same values as a dictionary")
    func againstDictionary() {
        let seed = partTestSeed("ItemPayloadTests.againstDictionary")
        var random = SeededGenerator(seed: seed)
        var payload = ItemPayload<Note>()
        var reference: [Int64: Note] = [:]
        var nextID: Int64 = 1
        var reserved = false
        for step in 0..<2_000 {
            let context = "seed \(seed), step \(step)"
            switch Int.random(in: 0..<20, using: &random) {
            case 0..<8:
                // An item arrives (a fetch or a commit placed it).
                let id = nextID
                nextID += 1
                let item = Self.note(id, version: 0)
                payload[id] = item
                reference[id] = item
            case 8..<12:
                // A commit re-read an item: its value changes in place.
                guard let id = reference.keys.randomElement(using: &random) else { continue }
                let item = Self.note(id, version: Int.random(in: 1...100, using: &random))
                payload[id] = item
                reference[id] = item
            case 12..<17:
                guard let id = reference.keys.randomElement(using: &random) else { continue }
                payload[id] = nil
                reference[id] = nil
            case 17:
                // A refetch starts over, keeping the room it had.
                let hadRoom = !payload.isEmptyCapacity
                payload.removeAll()
                reference.removeAll()
                #expect(payload.isEmptyCapacity == !hadRoom, "\(context): a clear must keep the capacity")
            case 18:
                if !reserved {
                    payload.reserveCapacity(64)
                    reserved = true
                    #expect(!payload.isEmptyCapacity, "\(context): reserved room")
                }
            default:
                // Reading an id that was never stored, or is gone, finds nothing.
                let id = Int64.random(in: -3...(nextID + 3), using: &random)
                #expect(payload[id] == reference[id], "\(context): id \(id)")
            }
            payload._checkInvariants()
            #expect(payload.count == reference.count, "\(context): \(payload.count) values, \(reference.count) in the reference")
            var visited: [Int64: Note] = [:]
            payload.forEach { visited[$0] = $1 }
            #expect(visited == reference, "\(context): iteration differs from the reference")
            let wrong = (Int64(0)...nextID).filter { payload[$0] != reference[$0] }
            #expect(wrong.isEmpty, "\(context): values of \(wrong.prefix(10)) differ from the reference")
        }
    }
}
