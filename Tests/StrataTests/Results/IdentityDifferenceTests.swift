import Foundation
import Testing

@testable import Strata

/// An item identified by a string: `ChangeBatch(from:to:)`'s generic path (a `Row`'s `Int` id
/// takes the path for 64-bit integer ids).
struct NamedRow: Identifiable, ResultsItem {
    var id: String
    var version: Int = 0
}

/// Random pairs of related snapshots: a new snapshot made from the old one by deleting,
/// inserting and moving rows (inside and across sections), changing values, moving rows in
/// and out of group rows, and deleting, inserting, moving and renaming sections.
struct SnapshotPairGenerator {
    struct SectionSpec {
        var name: String
        var renamed = false
        var rows: [(id: Int, version: Int)] = []
        var group: [(id: Int, version: Int)] = []
    }

    var random: SeededGenerator
    let maxRows: Int

    init(seed: UInt64, maxRows: Int) {
        random = SeededGenerator(seed: seed)
        self.maxRows = maxRows
    }

    private mutating func chance(_ oneIn: Int) -> Bool { Int.random(in: 0..<oneIn, using: &random) == 0 }
    private mutating func below(_ bound: Int) -> Int { Int.random(in: 0..<bound, using: &random) }

    mutating func pair() -> (old: [SectionSpec], new: [SectionSpec]) {
        let names = ["A", "B", "C", "D", "E", "F", "G", "H"]
        var old = names.filter { _ in !chance(3) }.shuffled(using: &random).map { SectionSpec(name: $0) }
        if !old.isEmpty {
            let groups = chance(2)
            for id in 0..<maxRows where !chance(4) {
                let s = below(old.count)
                let row = (id, chance(4) ? 1 : 0)
                if groups && chance(8) { old[s].group.append(row) } else { old[s].rows.append(row) }
            }
            for s in old.indices { old[s].rows.shuffle(using: &random) }
        }
        // The new snapshot.
        var new = old
        let deleteOneIn = [2, 4, 10, 50][below(4)]
        let moveOneIn = [3, 10, 30, 100][below(4)]
        var movedOut: [(id: Int, version: Int)] = []
        for s in new.indices {
            new[s].renamed = chance(6)
            new[s].rows.removeAll { _ in chance(deleteOneIn) }
            new[s].rows = new[s].rows.map { chance(6) ? ($0.id, $0.version + 1) : $0 }
            // Rows out of and into the group row.
            if !new[s].group.isEmpty && chance(3) { new[s].rows.append(new[s].group.removeLast()) }
            if !new[s].rows.isEmpty && chance(4) { new[s].group.append(new[s].rows.removeFirst()) }
            if !new[s].group.isEmpty && chance(5) { new[s].group[0].version += 1 }
            // Moves inside the section, and rows taken out for other sections.
            for _ in 0..<new[s].rows.count where chance(moveOneIn) && new[s].rows.count > 1 {
                let row = new[s].rows.remove(at: below(new[s].rows.count))
                new[s].rows.insert(row, at: below(new[s].rows.count + 1))
            }
            for _ in 0..<new[s].rows.count where chance(moveOneIn) && !new[s].rows.isEmpty {
                movedOut.append(new[s].rows.remove(at: below(new[s].rows.count)))
            }
        }
        // Sections deleted (their rows are gone or move elsewhere), inserted, moved.
        new.removeAll { section in
            guard chance(6) else { return false }
            if chance(2) { movedOut += section.rows.filter { _ in chance(2) } }
            return true
        }
        let present = Set(new.map(\.name))
        for name in names where !present.contains(name) && chance(4) {
            new.insert(SectionSpec(name: name), at: below(new.count + 1))
        }
        if new.count > 1 && chance(3) {
            for _ in 0..<(1 + below(3)) { new.swapAt(below(new.count), below(new.count)) }
        }
        if !new.isEmpty {
            for row in movedOut {
                let s = below(new.count)
                new[s].rows.insert(row, at: below(new[s].rows.count + 1))
            }
            for id in maxRows..<(maxRows + below(maxRows / 4 + 1)) {
                let s = below(new.count)
                new[s].rows.insert((id, 0), at: below(new[s].rows.count + 1))
            }
        }
        return (old, new)
    }

    static func snapshot<Item>(
        _ specs: [SectionSpec], _ makeItem: (Int, Int) -> Item
    ) -> ResultsSnapshot<Item, String> {
        ResultsSnapshot(sections: specs.map { spec in
            var rows = spec.rows.map { ResultsRow.item(makeItem($0.id, $0.version)) }
            if !spec.group.isEmpty { rows.append(.group(spec.group.map { makeItem($0.id, $0.version) })) }
            return ResultsSection(
                id: .key(spec.name.databaseValue), value: .value(spec.renamed ? spec.name + "'" : spec.name), rows: rows)
        })
    }
}

@Suite struct IdentityDifferenceTests {
    /// Checks the optimized difference against the reference, and that it replays, for one
    /// pair; also with the sections whose rows differ given as the only changed ones.
    func check<Item>(
        _ old: ResultsSnapshot<Item, String>, _ new: ResultsSnapshot<Item, String>, _ label: String
    ) throws -> Bool {
        old._checkInvariants()
        new._checkInvariants()
        let batch = ChangeBatch(from: old, to: new)
        let reference = ChangeBatch(referenceFrom: old, to: new, changedSections: nil)
        guard batch == reference else {
            Issue.record("\(label): differs from the reference\nbatch:     \(batch)\nreference: \(reference)\nold: \(old)\nnew: \(new)")
            return false
        }
        do {
            try BatchValidator.validate(batch, from: old, to: new)
            let replayed = try batch.apply(to: old, reading: new)
            guard replayed == new else {
                Issue.record("\(label): replay differs\nbatch: \(batch)\nold: \(old)\nnew: \(new)")
                return false
            }
        } catch {
            Issue.record("\(label): \(error)\nbatch: \(batch)\nold: \(old)\nnew: \(new)")
            return false
        }
        // Restricted to the sections present in both whose rows differ.
        var changed = Set<SectionID>()
        for section in new.sections {
            if let o = old.index(ofSection: section.id), old.sections[o].rows == section.rows { continue }
            changed.insert(section.id)
        }
        // The sections the batch touches: those whose rows differ, and those deleted or
        // inserted (a section only moved or renamed is not touched).
        var touched = changed
        for section in old.sections where new.index(ofSection: section.id) == nil { touched.insert(section.id) }
        guard batch.touchedSections(from: old, to: new) == touched else {
            Issue.record("\(label): touched sections \(batch.touchedSections(from: old, to: new)), expected \(touched)")
            return false
        }
        let restricted = ChangeBatch(from: old, to: new, changedSections: changed)
        guard restricted == batch, restricted == ChangeBatch(referenceFrom: old, to: new, changedSections: changed) else {
            Issue.record("\(label): the restricted difference differs\nrestricted: \(restricted)\nbatch:      \(batch)")
            return false
        }
        return true
    }

    /// Many random related pairs, with ids that take each matching path: dense integers (an
    /// array indexed by id), sparse integers (an open-addressing table), strings (a
    /// dictionary).
    @Test(arguments: 0..<60) func equalsTheReferenceAndReplays(seed: UInt64) throws {
        var generator = SnapshotPairGenerator(seed: seed, maxRows: [8, 40, 200][Int(seed % 3)])
        for round in 0..<40 {
            let (oldSpec, newSpec) = generator.pair()
            let label = "seed \(seed) round \(round)"
            let dense = { (id: Int, version: Int) in Row(id: id, version: version) }
            let sparse = { (id: Int, version: Int) in Row(id: (id &* 0x5851_F42D_4C95_7F2D) >> 3, version: version) }
            let named = { (id: Int, version: Int) in NamedRow(id: "row \(id)", version: version) }
            guard
                try check(SnapshotPairGenerator.snapshot(oldSpec, dense), SnapshotPairGenerator.snapshot(newSpec, dense), label + " dense"),
                try check(SnapshotPairGenerator.snapshot(oldSpec, sparse), SnapshotPairGenerator.snapshot(newSpec, sparse), label + " sparse"),
                try check(SnapshotPairGenerator.snapshot(oldSpec, named), SnapshotPairGenerator.snapshot(newSpec, named), label + " named")
            else { return }
        }
    }

    /// Ids at the ends of the integer range, and ids of other 64-bit integer types.
    @Test func extremeAndOtherIntegerIDs() throws {
        let ids = [Int.min, Int.min + 1, -1, 0, 1, Int.max - 1, Int.max]
        let old = snap([("A", ids.map { Row(id: $0) }), ("B", [])])
        let new = snap([("A", [Row(id: Int.max), Row(id: 0), Row(id: Int.min, version: 1)]), ("B", [Row(id: -1), Row(id: 7)])])
        #expect(try check(old, new, "extremes"))
        #expect(Int64IDReader<EntityID<Row>>() != nil)
        #expect(Int64IDReader<Int64>() != nil)
        #expect(Int64IDReader<String>() == nil)
        #expect(Int64IDReader<Int32>() == nil)
    }

    /// The longest increasing subsequence is one of maximal length, strictly increasing, and
    /// the one the reference picks.
    @Test(arguments: 0..<20) func longestIncreasingSubsequence(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        for _ in 0..<100 {
            let count = Int.random(in: 0..<40, using: &random)
            let values = (0..<count).map { _ in Int.random(in: 0..<20, using: &random) }
            let mask = Strata.longestIncreasingSubsequence(values)
            let chosen = values.indices.filter { mask[$0] }
            #expect(Set(chosen) == referenceLongestIncreasingSubsequence(values), "\(values)")
            #expect(zip(chosen, chosen.dropFirst()).allSatisfy { values[$0] < values[$1] }, "\(values)")
            // Maximal length, by dynamic programming.
            var best = [Int](repeating: 1, count: count)
            for i in 0..<count { for j in 0..<i where values[j] < values[i] { best[i] = max(best[i], best[j] + 1) } }
            #expect(chosen.count == (best.max() ?? 0), "\(values)")
        }
    }
}
