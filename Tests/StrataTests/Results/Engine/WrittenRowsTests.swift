import Testing

@testable import Strata

/// ``WrittenRows`` against a plain set of the ids written: every id of the table's range, and
/// ids beside it, answer alike, with the range narrow (a bit an id) and wide (a set).
@Suite("Written rows")
struct WrittenRowsTests {
    @Test("random commits: every id of the table answers as the set of ids written does", arguments: [0, 1, 2, 3])
    func againstSet(_ run: Int) {
        let seed = partTestSeed("WrittenRowsTests.againstSet(\(run))")
        var random = SeededGenerator(seed: seed)
        for round in 0..<40 {
            // Narrow ranges (bits) and wide ones (a set), at the edges of Int64 too.
            let low: Int64 = switch round % 4 {
            case 0: Int64.random(in: -5...5, using: &random)
            case 1: Int64.max - 200
            case 2: Int64.min
            default: Int64.random(in: 1...1_000_000, using: &random)
            }
            let width = round % 3 == 0 ? Int64(1) << 40 : Int64.random(in: 0...200, using: &random)
            let high = low.addingReportingOverflow(width).overflow ? Int64.max : low + width
            let table = low...high
            var changes = CommittedChanges.TableChanges()
            func someID() -> Int64 {
                let offset = Int64.random(in: 0...min(width, 300), using: &random)
                return Bool.random(using: &random) ? low &+ offset : high &- offset
            }
            for _ in 0..<Int.random(in: 0...60, using: &random) {
                switch Int.random(in: 0..<3, using: &random) {
                case 0: changes.inserted.insert(someID())
                case 1: changes.updated.insert(someID())
                default: changes.deleted.insert(someID())
                }
            }
            let reference = changes.inserted.union(changes.updated).union(changes.deleted)
            let written = WrittenRows(changes, ids: table)
            var asked = Set(reference)
            for offset in 0...min(width, 400) { asked.insert(low &+ offset); asked.insert(high &- offset) }
            for id in asked where table.contains(id) {
                #expect(written.contains(id) == reference.contains(id), "seed \(seed), round \(round): id \(id) in \(table)")
            }
            // An empty table: every id written answers from the set.
            let unbounded = WrittenRows(changes, ids: nil)
            for id in asked { #expect(unbounded.contains(id) == reference.contains(id), "seed \(seed): id \(id), no range") }
        }
    }
}
