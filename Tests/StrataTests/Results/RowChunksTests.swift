import Testing
@testable import Strata

/// The chunked storage of eager rows on its own: random inserts, removals, replacements,
/// appends and slices against a plain array, with the invariants checked after every step
/// (seeded; the seed is in every failure). Snapshots made from each other share chunks.
@Suite("Row chunks, alone")
struct RowChunksTests {
    @Test("random operations keep the same elements as an array", arguments: [0, 1, 3_000])
    func againstArray(_ start: Int) {
        let seed = UInt64.random(in: 1...1_000_000)
        var random = SeededGenerator(seed: seed)
        var reference = Array(0..<start)
        var chunks = RowChunks(reference)
        var next = start
        for step in 0..<3_000 {
            let snapshot = chunks  // an earlier value must never change
            let before = reference
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<4:
                let position = Int.random(in: 0...reference.count, using: &random)
                reference.insert(next, at: position)
                chunks.insert(next, at: position)
                next += 1
            case 4..<7:
                guard !reference.isEmpty else { continue }
                let position = Int.random(in: 0..<reference.count, using: &random)
                #expect(chunks.remove(at: position) == reference.remove(at: position), "seed \(seed), step \(step)")
            case 7:
                guard !reference.isEmpty else { continue }
                let position = Int.random(in: 0..<reference.count, using: &random)
                reference[position] = next
                chunks.replace(at: position, with: next)
                next += 1
            case 8:
                reference.append(next)
                chunks.append(next)
                next += 1
            default:
                let lower = Int.random(in: 0...reference.count, using: &random)
                let upper = Int.random(in: lower...reference.count, using: &random)
                var slice = RowChunks<Int>()
                slice.append(from: chunks, lower..<upper)
                slice._checkInvariants()
                #expect(Array(slice) == Array(reference[lower..<upper]), "seed \(seed), step \(step): slice")
            }
            chunks._checkInvariants()
            #expect(Array(snapshot) == before, "seed \(seed), step \(step): an earlier value changed")
            #expect(chunks.count == reference.count, "seed \(seed), step \(step)")
            if step % 100 == 0 || reference.count < 50 {
                #expect(Array(chunks) == reference, "seed \(seed), step \(step)")
                #expect(chunks.indices.map { chunks[$0] } == reference, "seed \(seed), step \(step): subscript")
            }
        }
        #expect(Array(chunks) == reference, "seed \(seed)")
    }

    @Test("a value made from another by one change shares every chunk but one")
    func sharing() {
        let base = RowChunks(0..<10_000)
        var changed = base
        changed.insert(-1, at: 5_000)
        #expect(!changed.sharesStorage(with: base))
        let shared = zip(changed.chunks.indices, base.chunks.indices).filter { changed.sharesChunk($0.0, with: base) }.count
        #expect(shared == base.chunks.count - 1)
        var copy = base
        copy.replace(at: 0, with: 0)
        #expect(Array(copy) == Array(base))
        #expect(base.sharesStorage(with: RowChunks(base)) == false && base.sharesStorage(with: base))
    }
}
