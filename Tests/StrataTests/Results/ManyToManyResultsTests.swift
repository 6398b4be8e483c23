import Foundation
import GRDB
import Testing
@testable import Strata

/// Requests over a many-to-many relationship of the item (`ANY tags.name == …`,
/// `tags.@count > 1`, the notes of one tag) follow links and unlinks from the join rows
/// each commit records: the linked or unlinked note is re-read by id, and nothing is
/// refetched. The statement trace shows it; the batches are checked like every other.
@Suite("Results over many-to-many relationships")
struct ManyToManyResultsTests {
    @Test("link, unlink, renaming and deleting a tag re-read only the notes concerned")
    func incrementalMembership() throws {
        let store = try Store.inMemory(schema: NotesModel.schema)
        let (t1, t2, notes) = try store.write { db -> (Tag, Tag, [Note]) in
            let t1 = try db.insert(Tag(name: "t1")), t2 = try db.insert(Tag(name: "t2"))
            var notes: [Note] = []
            for index in 0..<200 { notes.append(try db.insert(Note(title: "n\(index)", updatedAt: Date()))) }
            for note in notes.prefix(20) { try db.link(note.id, Note.tags, t1.id) }
            return (t1, t2, notes)
        }
        let trace = store.traceStatements()
        let tagged = try Harness(store: store, ResultsRequest<Note, NoSection>(
            where: Note.tags.any(Tag.name == "t1") || Note.tags.count > 1, sortedBy: [Note.title.ascending]))
        let taggedReads = try ItemReads(lastFullFetchIn: trace.statements)
        let ofTag = try Harness(store: store, try Store.request(Tag.notes, of: t2.id, sortedBy: [Note.title.ascending]))
        let ofTagReads = try ItemReads(lastFullFetchIn: trace.statements)
        #expect(taggedReads.signature != ofTagReads.signature)
        #expect(tagged.controller.snapshot.sections[0].items.count == 20)

        func step(_ body: (Database) throws -> Void) throws -> (tagged: [[Int64]], ofTag: [[Int64]]) {
            trace.removeAll()
            try store.write(body)
            tagged.controller.waitForDeliveries()
            ofTag.controller.waitForDeliveries()
            let statements = trace.statements
            #expect(taggedReads.fullFetches(in: statements) == 0, "\(statements)")
            #expect(ofTagReads.fullFetches(in: statements) == 0, "\(statements)")
            return (taggedReads.rowReads(in: statements), ofTagReads.rowReads(in: statements))
        }

        let n50 = notes[50].id.rawValue, n3 = notes[3].id.rawValue
        var reads = try step { db in try db.link(notes[50].id, Note.tags, t1.id) }
        #expect(reads.tagged == [[n50]])
        reads = try step { db in try db.link(notes[50].id, Note.tags, t2.id) }
        #expect(reads.tagged == [[n50]] && reads.ofTag == [[n50]])
        reads = try step { db in try db.unlink(notes[3].id, Note.tags, t1.id) }
        #expect(reads.tagged == [[n3]])
        // Renaming t1 affects its 20 linked notes (read by id), not the others.
        reads = try step { db in
            var tag = t1
            tag.name = "renamed"
            try db.update(tag)
        }
        #expect(Set(reads.tagged.flatMap { $0 }).count == 20)
        #expect(tagged.controller.snapshot.sections.flatMap(\.items).map(\.id) == [notes[50].id])
        // Deleting t2 (nullify: its join rows go) takes n50 out of the tag's list.
        reads = try step { db in try db.delete(t2) }
        #expect(reads.ofTag == [[n50]])
        #expect(ofTag.controller.snapshot.sections.flatMap(\.items).isEmpty)
        try tagged.check()
        try ofTag.check()
    }
}
