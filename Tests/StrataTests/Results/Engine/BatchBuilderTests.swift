import Foundation
import GRDB
import Testing

@testable import Strata

/// The batch builder on its own (``BatchBuilder``), from its doc comments: for each kind of
/// knowledge of what changed, a batch that replays the old snapshot into the new one — the
/// restricted differences equal to the whole one when only the named sections changed — or no
/// batch for a refetch of batched results; and a user edit's batch that holds exactly the
/// edit, marked as such, reading no row. With it, the edit's snapshot (``UserEdit``): the old
/// one with the row moved or deleted.
@Suite("Batch builder and user edits, alone")
struct BatchBuilderTests {
    static func note(_ id: Int64, _ title: String, version: Int = 0) -> Note {
        Note(id: Note.ID(id), title: version == 0 ? title : "\(title)v\(version)", updatedAt: day)
    }

    /// `[("A", [1, 2]), ("B", [3])]` as a keyed snapshot of notes (titled by their id).
    static func snapshot(_ sections: [(String, [Int64])], versions: [Int64: Int] = [:]) -> ResultsSnapshot<Note, String> {
        ResultsSnapshot(sections: sections.map { name, ids in
            ResultsSection(
                id: .key(name.databaseValue), value: .value(name),
                rows: ids.map { .item(note($0, "n\($0)", version: versions[$0] ?? 0)) })
        })
    }

    static func replays(_ batch: ChangeBatch?, _ old: ResultsSnapshot<Note, String>, _ new: ResultsSnapshot<Note, String>) throws -> Bool {
        guard let batch else { return false }
        try BatchValidator.validate(batch, from: old, to: new)
        return try batch.apply(to: old, reading: new) == new
    }

    @Test("anything: the identity difference, which replays")
    func anything() throws {
        let old = Self.snapshot([("A", [1, 2, 3]), ("B", [4])])
        let new = Self.snapshot([("A", [3, 1]), ("C", [5]), ("B", [4, 2])], versions: [1: 1])
        let batch = BatchBuilder.batch(from: old, to: new, known: .anything)
        #expect(try Self.replays(batch, old, new))
        #expect(batch == ChangeBatch(from: old, to: new))
    }

    @Test("sections: restricted to the sections named, equal to the whole difference when only they changed")
    func sections() throws {
        let old = Self.snapshot([("A", [1, 2, 3]), ("B", [4]), ("C", [6, 7])])
        let new = Self.snapshot([("A", [3, 1]), ("B", [4, 2]), ("C", [6, 7])], versions: [3: 2])
        let touched: Set<SectionID> = [.key("A".databaseValue), .key("B".databaseValue)]
        let batch = BatchBuilder.batch(from: old, to: new, known: .sections(touched))
        #expect(try Self.replays(batch, old, new))
        #expect(batch == ChangeBatch(from: old, to: new))
        let sinceEdit = BatchBuilder.batch(from: old, to: new, known: .sinceUserEdit(touched: touched))
        #expect(sinceEdit == ChangeBatch(from: old, to: new))
        let sinceEditAny = BatchBuilder.batch(from: old, to: new, known: .sinceUserEdit(touched: nil))
        #expect(sinceEditAny == ChangeBatch(from: old, to: new))
    }

    @Test("rows: built from the places the rows left and took, replays")
    func rows() throws {
        let old = Self.snapshot([("A", [1, 2, 3])])
        let new = Self.snapshot([("A", [2, 3, 1])])
        let a = SectionID.key("A".databaseValue)
        let moved = RowChange(old: RowChange.Place(section: a, index: 0), new: RowChange.Place(section: a, index: 2))
        let batch = BatchBuilder.batch(from: old, to: new, known: .rows([moved]))
        #expect(try Self.replays(batch, old, new))
    }

    @Test("refetched: matched by the ids kept, equal to the identity difference; the snapshots' when the ids do not describe them")
    func refetched() throws {
        let old = Self.snapshot([("A", [1, 2, 3]), ("B", [4]), ("D", [8])])
        let new = Self.snapshot([("A", [3, 1]), ("C", [5]), ("B", [4, 2]), ("D", [8])], versions: [1: 1, 2: 1, 8: 1])
        func ids(_ sections: [(String, [Int64])]) -> [SectionID: RowChunks<Int64>] {
            Dictionary(uniqueKeysWithValues: sections.map { (SectionID.key($0.databaseValue), RowChunks($1)) })
        }
        let changed: Set<Int64> = [1, 2, 8]
        var compared: [Int64] = []
        let kept = RefetchedRows(
            oldIDs: ids([("A", [1, 2, 3]), ("B", [4]), ("D", [8])]), newIDs: ids([("A", [3, 1]), ("C", [5]), ("B", [4, 2]), ("D", [8])])
        ) { { id in compared.append(id); return changed.contains(id) } }
        let batch = BatchBuilder.batch(from: old, to: new, known: .refetched(kept))
        #expect(try Self.replays(batch, old, new))
        #expect(batch == ChangeBatch(from: old, to: new))
        #expect(Set(compared) == [1, 2, 3, 4, 8], "each row in both compared by its id")
        // Ids that do not describe the snapshots (a section's count differs): the snapshots' difference.
        let stale = RefetchedRows(oldIDs: ids([("A", [1, 2])]), newIDs: kept.newIDs) { { _ in false } }
        #expect(BatchBuilder.batch(from: old, to: new, known: .refetched(stale)) == ChangeBatch(from: old, to: new))
    }

    @Test("a refetch of batched results builds no batch")
    func refetchedInPages() {
        let old = Self.snapshot([("A", [1])]), new = Self.snapshot([("A", [2])])
        #expect(BatchBuilder.batch(from: old, to: new, known: .refetchedInPages) == nil)
    }

    @Test("a move: exactly the move, marked, listed as updated when the value changed; its snapshot has the row moved")
    func move() throws {
        let old = Self.snapshot([("A", [1, 2, 3]), ("B", [4])])
        let cases: [(Move<ItemPath>, Bool, [(String, [Int64])])] = [
            (Move(from: ItemPath(section: 0, item: 0), to: ItemPath(section: 0, item: 2)), false, [("A", [2, 3, 1]), ("B", [4])]),
            (Move(from: ItemPath(section: 0, item: 1), to: ItemPath(section: 1, item: 0)), true, [("A", [1, 3]), ("B", [2, 4])]),
            (Move(from: ItemPath(section: 1, item: 0), to: ItemPath(section: 0, item: 3)), false, [("A", [1, 2, 3, 4]), ("B", [])]),
        ]
        for (move, changed, expected) in cases {
            let id = old[move.from].item!.objectID.rawValue
            let moved = Self.note(id, "n\(id)", version: changed ? 1 : 0)
            let edit = UserEdit<Note>.move(move, item: moved, valueChanged: changed)
            let new = edit.applied(to: old)
            #expect(new == Self.snapshot(expected, versions: changed ? [id: 1] : [:]), "\(move)")
            let batch = BatchBuilder.batch(from: old, to: new, edit: edit)
            #expect(batch.userEdit == .move)
            #expect(batch.itemMoves == [move])
            #expect(batch.movedAndUpdatedItems == (changed ? [move.to] : []))
            #expect(batch.itemInserts.isEmpty && batch.itemDeletes.isEmpty && batch.sectionDeletes.isEmpty)
            #expect(try Self.replays(batch, old, new), "\(move)")
            #expect(edit.touchedSections(of: old) == [old.sections[move.from.section].id, old.sections[move.to.section].id])
        }
    }

    @Test("a delete: the row's deletion, or its transient section's when it leaves it empty")
    func delete() throws {
        let old = Self.snapshot([("A", [1, 2]), ("B", [3])])
        let row = UserEdit<Note>.delete(ItemPath(section: 0, item: 1))
        let withoutRow = row.applied(to: old)
        #expect(withoutRow == Self.snapshot([("A", [1]), ("B", [3])]))
        let rowBatch = BatchBuilder.batch(from: old, to: withoutRow, edit: row)
        #expect(rowBatch.userEdit == .delete && rowBatch.itemDeletes == [ItemPath(section: 0, item: 1)])
        #expect(try Self.replays(rowBatch, old, withoutRow))
        #expect(row.touchedSections(of: old) == [.key("A".databaseValue)])

        // A keyed section exists only while it has items.
        let last = UserEdit<Note>.delete(ItemPath(section: 1, item: 0))
        let withoutSection = last.applied(to: old)
        #expect(withoutSection == Self.snapshot([("A", [1, 2])]))
        let sectionBatch = BatchBuilder.batch(from: old, to: withoutSection, edit: last)
        #expect(sectionBatch.userEdit == .delete && sectionBatch.sectionDeletes == [1] && sectionBatch.itemDeletes.isEmpty)
        #expect(try Self.replays(sectionBatch, old, withoutSection))
    }
}
