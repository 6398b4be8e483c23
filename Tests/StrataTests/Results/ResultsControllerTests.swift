import Dispatch
import Foundation
import GRDB
import Testing

@testable import Strata

/// Recorded-sequence tests: every delivery of a scenario, asserted whole.
@Suite struct ResultsControllerTests {
    @Test func emptySectionsAppearAndDisappear() throws {
        let h = try Harness(Note.Fetches.byNotebook) { db in
            try db.notebook("Work", position: 0)
            try db.notebook("Home", position: 1)
        }
        try h.write { db in try db.notebook("Misc", position: 2) }
        try h.write { db in try db.notebook(named: "Home").delete(db) }
        try h.write { db in try db.note("a", in: db.notebook(named: "Misc")) }
        #expect(
            lines(h.recorder.updates, text) == [
                "reload | Work[] Home[]",
                "s+[2] | Work[] Home[] Misc[]",
                "s-[1] | Work[] Misc[]",
                "i+[[1, 0]] | Work[] Misc[a]",
            ])
        try h.check()
    }

    @Test func sectionRenamedIsAnUpdateAndResortedIsAMove() throws {
        let h = try Harness(Note.Fetches.byNotebook) { db in
            let work = try db.notebook("Work", position: 0)
            try db.notebook("Home", position: 1)
            try db.note("a", in: work)
        }
        try h.write { db in
            var work = try db.notebook(named: "Work")
            work.name = "Job"
            try work.update(db)
        }
        try h.write { db in
            var job = try db.notebook(named: "Job")
            job.position = 5
            try job.update(db)
        }
        try h.write { db in
            var job = try db.notebook(named: "Job")
            job.position = -1
            job.name = "Office"
            try job.update(db)
        }
        // A note change is not a section update.
        try h.write { db in
            var a = try db.note(titled: "a")
            a.body = "changed"
            try a.update(db)
        }
        #expect(
            lines(h.recorder.updates, text) == [
                "reload | Work[a] Home[]",
                "s~[0] | Job[a] Home[]",
                // The position is part of the notebook's value: moved and updated.
                "s>[0→1] s>~[1] | Home[] Job[a]",
                // One move is enough: Home moves below, Office stays and is updated.
                "s>[0→1] s~[1] | Office[a] Home[]",
                "i~[[0, 0]] | Office[a] Home[]",
            ])
        try h.check()
    }

    @Test func sectionDeletedWithItsCascadeDeletedItems() throws {
        let h = try Harness(Note.Fetches.byNotebook) { db in
            let work = try db.notebook("Work", position: 0)
            let home = try db.notebook("Home", position: 1)
            try db.note("a", in: work)
            try db.note("b", in: work)
            try db.note("c", in: home)
        }
        try h.write { db in try db.notebook(named: "Work").delete(db) }
        #expect(
            lines(h.recorder.updates, text) == [
                "reload | Work[a b] Home[c]",
                "s-[0] | Home[c]",
            ])
        try h.check()
    }

    @Test func itemMovesBetweenSectionsWhileUpdated() throws {
        let h = try Harness(Note.Fetches.byNotebook) { db in
            let work = try db.notebook("Work", position: 0)
            let home = try db.notebook("Home", position: 1)
            try db.note("a", in: work)
            try db.note("b", in: work)
            try db.note("c", in: home)
        }
        try h.write { db in
            var a = try db.note(titled: "a")
            a.notebookID = try db.notebook(named: "Home").id
            a.title = "d"
            try a.update(db)
        }
        // Pinned notes sort first: b moves to the top of Home.
        try h.write { db in
            var b = try db.note(titled: "b")
            b.notebookID = try db.notebook(named: "Home").id
            b.pinned = true
            try b.update(db)
        }
        #expect(
            lines(h.recorder.updates, text) == [
                "reload | Work[a b] Home[c]",
                "i>[[0, 0]→[1, 1]] i>~[[1, 1]] | Work[b] Home[c d]",
                "i>[[0, 0]→[1, 0]] i>~[[1, 0]] | Work[] Home[b c d]",
            ])
        try h.check()
    }

    @Test func postFilterEmptiesAKeyedSectionAndRefillsIt() throws {
        let h = try Harness(Note.Fetches.byPriority) { db in
            try db.note("xa", priority: .low)
            try db.note("b", priority: .high)
            try db.note("xc", priority: .high)
        }
        h.controller.filter = { !$0.title.hasPrefix("x") }
        h.controller.waitForDeliveries()
        try h.write { db in try db.note("d", priority: .low) }
        try h.write { db in try db.note("xe", priority: .normal) }
        h.controller.filter = nil
        h.controller.waitForDeliveries()
        #expect(
            lines(h.recorder.updates, text) == [
                "reload | low[xa] high[b xc]",
                "s-[0] i-[[1, 1]] | high[b]",
                "s+[0] | low[d] high[b]",
                "s+[1] i+[[0, 1], [2, 1]] | low[d xa] normal[xe] high[b xc]",
            ])
        try h.check()
    }

    @Test func postFilterEmptiesAnEntitySectionAndANewItemRefillsIt() throws {
        let h = try Harness(Note.Fetches.byNotebook) { db in
            let work = try db.notebook("Work", position: 0)
            try db.note("xa", in: work)
        }
        h.controller.filter = { !$0.title.hasPrefix("x") }
        h.controller.waitForDeliveries()
        try h.write { db in try db.note("b", in: db.notebook(named: "Work")) }
        #expect(
            lines(h.recorder.updates, text) == [
                "reload | Work[xa]",
                "i-[[0, 0]] | Work[]",
                "i+[[0, 0]] | Work[b]",
            ])
        try h.check()
    }

    @Test func groupRowsAppearChangeAndDisappear() throws {
        let h = try Harness(Note.Fetches.byNotebook) { db in
            let work = try db.notebook("Work", position: 0)
            try db.note("a", in: work)
            try db.note("xb", in: work)
        }
        h.controller.options = ResultsOptions(filter: { !$0.title.hasPrefix("x") }, groupFilteredItems: true)
        h.controller.waitForDeliveries()
        try h.write { db in try db.note("xc", in: db.notebook(named: "Work")) }
        try h.write { db in try db.note(titled: "a").delete(db) }
        h.controller.groupFilteredItems = false
        h.controller.waitForDeliveries()
        #expect(
            lines(h.recorder.updates, text) == [
                "reload | Work[a xb]",
                "i-[[0, 1]] i+[[0, 1]] | Work[a {xb}]",
                "i~[[0, 1]] | Work[a {xb xc}]",
                "i-[[0, 0]] | Work[{xb xc}]",
                "i-[[0, 0]] | Work[]",
            ])
        try h.check()
    }

    @Test func comparatorChangeIsABatchOfMoves() throws {
        let h = try Harness(Note.Fetches.all) { db in
            try db.note("ccc")
            try db.note("a")
            try db.note("bb")
        }
        h.controller.comparator = { $0.title.count > $1.title.count }
        h.controller.waitForDeliveries()
        #expect(
            lines(h.recorder.updates, text) == [
                "reload | [a bb ccc]",
                "i>[[0, 0]→[0, 2], [0, 1]→[0, 1]] | [ccc bb a]",
            ])
        try h.check()
    }

    @Test func pauseStopsTrackingAndResumeReloads() throws {
        let h = try Harness(Note.Fetches.byNotebook) { db in
            try db.notebook("Work", position: 0)
        }
        h.controller.pause()
        #expect(h.controller.isPaused)
        try h.write { db in
            try db.note("a", in: db.notebook(named: "Work"))
            try db.notebook("Home", position: 1)
        }
        try h.controller.resume()
        h.controller.waitForDeliveries()
        try h.write { db in try db.note("b", in: db.notebook(named: "Home")) }
        #expect(
            lines(h.recorder.updates, text) == [
                "reload | Work[]",
                "reload | Work[a] Home[]",
                "i+[[1, 0]] | Work[a] Home[b]",
            ])
        try h.check()
    }

    @Test func reloadModeDeliversSnapshots() throws {
        let h = try Harness(Note.Fetches.all) { db in try db.note("a") }
        h.controller.deliveryMode = .reloads
        try h.write { db in try db.note("b") }
        #expect(lines(h.recorder.updates, text) == ["reload | [a]", "reload | [a b]"])
        // A commit that changes nothing shown delivers nothing.
        try h.write { db in try db.notebook("Work") }
        #expect(h.recorder.updates.count == 2)
        try h.check()
    }

    @Test func orphansSectionAndSectionPredicate() throws {
        let request = ResultsRequest<Note, Notebook>(
            sortedBy: [Note.title.ascending],
            sections: .entity(
                Note.notebook, sortedBy: [Notebook.name.ascending], where: Notebook.name != "Hidden", orphans: true))
        let h = try Harness(request) { db in
            try db.notebook("Work")
            let hidden = try db.notebook("Hidden")
            try db.note("a")
            try db.note("b", in: hidden)
        }
        try h.write { db in
            var hidden = try db.notebook(named: "Hidden")
            hidden.name = "Shown"
            try hidden.update(db)
        }
        try h.write { db in
            var a = try db.note(titled: "a")
            a.notebookID = try db.notebook(named: "Work").id
            try a.update(db)
        }
        #expect(
            lines(h.recorder.updates, text) == [
                "reload | Work[] ∅[a]",
                "s+[0] | Shown[b] Work[] ∅[a]",
                "s-[2] i+[[1, 0]] | Shown[b] Work[a]",
            ])
        try h.check()
    }

    @Test func predicateThroughToOneFollowsTheRelatedRow() throws {
        let request = Note.Fetches.all.filter(Note.notebook.name == "Work")
        let store = try Store.inMemory(schema: NotesModel.schema)
        let trace = store.traceStatements()
        let h = try Harness(store: store, request) { db in
            let work = try db.notebook("Work")
            let home = try db.notebook("Home")
            try db.note("a", in: work)
            try db.note("b", in: home)
        }
        let reads = try ItemReads(lastFullFetchIn: trace.statements)
        trace.removeAll()
        try h.write { db in
            var home = try db.notebook(named: "Home")
            home.name = "Work2"
            try home.update(db)
            var work = try db.notebook(named: "Work")
            work.name = "Old"
            try work.update(db)
            home.name = "Work"
            try home.update(db)
        }
        // Incremental: both notes re-read by id (their notebooks' names changed), no refetch.
        let statements = trace.statements
        #expect(reads.fullFetches(in: statements) == 0)
        #expect(reads.rowReads(in: statements).map { Set($0) } == [[1, 2]], "\(statements)")
        #expect(lines(h.recorder.updates, text) == ["reload | [a]", "i-[[0, 0]] i+[[0, 0]] | [b]"])
        try h.check()
        #expect(text(h.controller.snapshot) == "[b]")
    }

    @Test func asyncUpdatesStartWithAReload() async throws {
        let store = try Store.inMemory(schema: NotesModel.schema)
        let controller = try ResultsController(
            store: store, request: Note.Fetches.byPriority, deliveryQueue: DispatchQueue(label: "strata.tests.async"))
        var iterator = controller.updates.makeAsyncIterator()
        let first = try await iterator.next()
        #expect(first?.batch == nil)
        #expect(first.map { text($0.snapshot) } == "")
        _ = try await store.write { db in try db.note("a", priority: .high) }
        let second = try await iterator.next()
        #expect(second?.batch == ChangeBatch(sectionInserts: [0]))
        #expect(second.map { text($0.snapshot) } == "high[a]")
    }

    @Test func delegateGetsFetchedResultsStyleCallbacks() throws {
        final class Log: ResultsControllerDelegate, @unchecked Sendable {
            var events: [String] = []
            func controllerWillChangeContent(_ controller: ResultsController<Note, Notebook>) { events.append("will") }
            func controller(
                _ controller: ResultsController<Note, Notebook>, didChange section: ResultsSection<Note, Notebook>,
                atSectionIndex index: Int, for type: ResultsChangeType, newSectionIndex: Int?
            ) {
                events.append("section \(type) \(index) \(newSectionIndex.map(String.init) ?? "-") \(section.value.object?.name ?? "")")
            }
            func controller(
                _ controller: ResultsController<Note, Notebook>, didChange row: ResultsRow<Note>, at indexPath: ItemPath?,
                for type: ResultsChangeType, newIndexPath: ItemPath?
            ) {
                events.append("row \(type) \(indexPath.map(\.description) ?? "-") \(newIndexPath.map(\.description) ?? "-") \(row.item?.title ?? "")")
            }
            func controllerDidChangeContent(_ controller: ResultsController<Note, Notebook>) { events.append("did") }
        }
        let h = try Harness(Note.Fetches.byNotebook) { db in
            let work = try db.notebook("Work", position: 0)
            try db.note("a", in: work)
            try db.note("b", in: work)
        }
        let log = Log()
        h.controller.delegate = log
        try h.write { db in
            try db.notebook("Home", position: 1)
            var a = try db.note(titled: "a")
            a.title = "c"
            try a.update(db)
            var b = try db.note(titled: "b")
            b.body = "x"
            try b.update(db)
        }
        #expect(
            log.events == [
                "will",
                "section insert 1 - Home",
                "row move [0, 0] [0, 1] c",
                "row update [0, 1] - b",
                "did",
            ])
    }
}

@Suite struct ResultsControllerScaleTests {
    @Test func optionalKeySectionsIncludeNil() throws {
        let request = ResultsRequest<Note, Notebook.ID?>(sortedBy: [Note.title.ascending], sections: .key(Note.notebookID))
        let h = try Harness(request) { db in
            let work = try db.notebook("Work")
            try db.note("a", in: work)
            try db.note("b")
        }
        #expect(h.controller.snapshot.sections.map(\.value) == [.value(nil), .value(Notebook.ID(1))])
        try h.write { db in
            var b = try db.note(titled: "b")
            b.notebookID = Notebook.ID(1)
            try b.update(db)
        }
        #expect(h.controller.snapshot.sections.map(\.value) == [.value(Notebook.ID(1))])
        try h.check()
    }

    /// A commit that changes one row of a large result is applied incrementally: no refetch,
    /// and one batch with one operation.
    @Test func oneChangeInALargeResultIsIncremental() throws {
        let store = try Store.inMemory(schema: NotesModel.schema)
        let trace = store.traceStatements()
        let h = try Harness(store: store, Note.Fetches.byNotebook) { db in
            var notebooks: [Notebook] = []
            for index in 0..<20 { notebooks.append(try db.notebook("N\(index)", position: index)) }
            for index in 0..<5000 {
                try db.note("note \(index)", in: notebooks[index % 20], pinned: index % 7 == 0)
            }
        }
        h.controller.checksInvariants = false
        let reads = try ItemReads(lastFullFetchIn: trace.statements)
        trace.removeAll()
        try h.write { db in
            var note = try db.note(titled: "note 42")
            note.notebookID = try db.notebook(named: "N3").id
            note.title = "moved"
            try note.update(db)
        }
        // The commit re-read that one note by id, and nothing else of the results.
        let noteID = try store.read { db in try Int64.fetchOne(db, sql: "SELECT id FROM Note WHERE title = 'moved'") }
        #expect(reads.fullFetches(in: trace.statements) == 0)
        #expect(reads.rowReads(in: trace.statements) == [[try #require(noteID)]])
        #expect(trace.statements.filter { $0.hasPrefix("SELECT") && $0.contains("\"Note\"") }.count == 2, "\(trace.statements)")
        // Exactly one move, from the note's old path to its new one, listed as updated: nothing else.
        let updates = h.recorder.updates
        #expect(updates.count == 2)
        let old = updates[0].snapshot, new = try #require(updates.last).snapshot
        let id = try #require(old.items.first { $0.title == "note 42" }?.id)
        let from = try #require(old.path(of: id)), to = try #require(new.path(of: id))
        #expect(updates.last?.batch == ChangeBatch(itemMoves: [Move(from: from, to: to)], movedAndUpdatedItems: [to]))
        h.controller._checkInvariants()
        try h.check()
    }
}
