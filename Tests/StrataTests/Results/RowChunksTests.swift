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
                // After some rows of its own (a chunk partly filled), and twice: runs of the
                // other are copied into the last chunk until it is full.
                let own = Array(-Int.random(in: 0...300, using: &random)..<0)
                var slice = RowChunks(own)
                slice.append(from: chunks, lower..<upper)
                let middle = Int.random(in: lower...upper, using: &random)
                slice.append(from: chunks, middle..<upper)
                slice._checkInvariants()
                #expect(
                    Array(slice) == own + Array(reference[lower..<upper]) + Array(reference[middle..<upper]),
                    "seed \(seed), step \(step): slice")
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

    @Test("ids are found, and values with other chunk boundaries compared, as in an array")
    func idsAgainstArray() {
        let seed = UInt64.random(in: 1...1_000_000)
        var random = SeededGenerator(seed: seed)
        for round in 0..<40 {
            let count = Int.random(in: 0..<2_000, using: &random)
            let reference = (0..<count).map { _ in Int64.random(in: -50...5_000, using: &random) }
            let whole = RowChunks(reference)
            // The same elements in other chunks: an element inserted at random places and
            // removed again splits the chunks where `whole` has none.
            var split = whole
            for _ in 0..<Int.random(in: 0..<30, using: &random) {
                let position = Int.random(in: 0...split.count, using: &random)
                for _ in 0..<300 { split.insert(-1, at: position) }
                for _ in 0..<300 { _ = split.remove(at: position) }
            }
            split._checkInvariants()
            #expect(Array(split) == reference, "seed \(seed), round \(round)")
            for probe in [-51, 5_001] + reference.prefix(10) + reference.suffix(10) {
                #expect(whole.firstIndex(of: probe) == reference.firstIndex(of: probe), "seed \(seed), round \(round), id \(probe)")
                #expect(split.firstIndex(of: probe) == reference.firstIndex(of: probe), "seed \(seed), round \(round), id \(probe)")
                #expect(split.contains(probe) == reference.contains(probe), "seed \(seed), round \(round), id \(probe)")
            }
            #expect(whole == split, "seed \(seed), round \(round): same elements, other chunks")
            guard !reference.isEmpty else { continue }
            // One element different, anywhere: not equal, whatever the chunks.
            var other = split
            let position = Int.random(in: 0..<reference.count, using: &random)
            other.replace(at: position, with: reference[position] &+ 1)
            #expect(whole != other && other != whole, "seed \(seed), round \(round): changed at \(position)")
            var shorter = split
            _ = shorter.remove(at: position)
            #expect(whole != shorter, "seed \(seed), round \(round): one fewer")
        }
    }
}
