#if canImport(Observation)
import Dispatch
import Foundation
import Observation
import Testing
@testable import Strata

/// `LiveResults` through the Observation module, as SwiftUI uses it: each commit notifies
/// exactly the tracked properties it changed, once, and nothing while paused.
@MainActor
@Suite("Live results (Observation)")
struct LiveResultsTests {
    /// Counts the change notifications of the properties `read` reads, re-arming after each
    /// one as SwiftUI does.
    final class Tracker: @unchecked Sendable {
        private(set) var count = 0
        private let read: @MainActor () -> Void

        @MainActor init(_ read: @escaping @MainActor () -> Void) {
            self.read = read
            arm()
        }

        @MainActor private func arm() {
            withObservationTracking { read() } onChange: { [self] in
                count += 1
                DispatchQueue.main.async { MainActor.assumeIsolated { self.arm() } }
            }
        }
    }

    /// Lets every delivery queued on the main queue so far, and the trackers' re-arming, run.
    private func deliveries() async {
        for _ in 0..<2 {
            await withCheckedContinuation { continuation in DispatchQueue.main.async { continuation.resume() } }
        }
    }

    private func fixture() throws -> (Store, LiveResults<Note, Notebook>, [Notebook]) {
        let store = try Store.inMemory(schema: NotesModel.schema)
        let notebooks = try store.write { db -> [Notebook] in
            let work = try db.insert(Notebook(name: "Work", position: 0))
            let home = try db.insert(Notebook(name: "Home", position: 1))
            try db.insert(Note(title: "w1", updatedAt: Date(), notebookID: work.id))
            try db.insert(Note(title: "h1", updatedAt: Date(), notebookID: home.id))
            return [work, home]
        }
        let live = try LiveResults(store: store, request: Note.Fetches.byNotebook)
        return (store, live, notebooks)
    }

    @Test("a commit notifies the changed section and the whole-state properties once, other sections never")
    func sectionGranularity() async throws {
        let (store, live, notebooks) = try fixture()
        #expect(live.sections.map { $0.value.object?.name } == ["Work", "Home"])
        let work = live.sections[0], home = live.sections[1]
        let workRows = Tracker { _ = work.rows }
        let homeRows = Tracker { _ = home.rows }
        let sections = Tracker { _ = live.sections }
        let count = Tracker { _ = live.count }
        let snapshot = Tracker { _ = live.snapshot }

        try store.insert(Note(title: "w2", updatedAt: Date(), notebookID: notebooks[0].id))
        await deliveries()
        #expect((workRows.count, homeRows.count, sections.count, count.count, snapshot.count) == (1, 0, 0, 1, 1))
        #expect(work.items.map(\.title) == ["w1", "w2"])

        // An update inside Home: Home's rows only; the count stays.
        try await store.write { db in
            var note = try #require(try db.fetchAll(Note.self).first { $0.title == "h1" })
            note.title = "h1 edited"
            try db.update(note)
        }
        await deliveries()
        #expect((workRows.count, homeRows.count, sections.count, count.count, snapshot.count) == (1, 1, 0, 1, 2))

        // A new notebook: the section list changes; no section's rows do.
        try store.insert(Notebook(name: "Later", position: 2))
        await deliveries()
        #expect((workRows.count, homeRows.count, sections.count, count.count, snapshot.count) == (1, 1, 1, 1, 3))
        #expect(live.sections.map { $0.value.object?.name } == ["Work", "Home", "Later"])
        #expect(live.snapshot == live.controller.snapshot)

        // lastBatch turns the previous snapshot into the current one.
        let before = live.snapshot
        try store.insert(Note(title: "l1", updatedAt: Date(), notebookID: live.sections[2].value.object!.id))
        await deliveries()
        let batch = try #require(live.lastBatch)
        #expect(try batch.apply(to: before, reading: live.snapshot) == live.snapshot)
        #expect(live.count == 4)
    }

    @Test("two equal batches in a row are two notifications of lastBatch and snapshot: every delivery is observable")
    func equalBatchesNotifyTwice() async throws {
        let (store, live, _) = try fixture()
        let lastBatch = Tracker { _ = live.lastBatch }
        let snapshot = Tracker { _ = live.snapshot }
        // Two edits of the same row: two batches that are `==` (one update at the same path).
        for title in ["w1 edited", "w1 edited again"] {
            try await store.write { db in
                var note = try #require(try db.fetchAll(Note.self).first { $0.title.hasPrefix("w1") })
                note.title = title
                try db.update(note)
            }
            await deliveries()
        }
        #expect((lastBatch.count, snapshot.count) == (2, 2))
        #expect(live.lastBatch?.itemUpdates == [ItemPath(section: 0, item: 0)])
        // Two inserts at the top of Work: equal batches again.
        for title in ["a", "0"] {
            try store.insert(Note(title: title, updatedAt: Date(), notebookID: live.sections[0].value.object!.id))
            await deliveries()
        }
        #expect((lastBatch.count, snapshot.count) == (4, 4))
        #expect(live.lastBatch?.itemInserts == [ItemPath(section: 0, item: 0)])
    }

    @Test("nothing is notified while paused; resume notifies once")
    func paused() async throws {
        let (store, live, notebooks) = try fixture()
        let snapshot = Tracker { _ = live.snapshot }
        let rows = Tracker { _ = live.sections[0].rows }
        live.pause()
        try store.insert(Note(title: "w2", updatedAt: Date(), notebookID: notebooks[0].id))
        live.options.filter = { !$0.title.hasPrefix("x") }
        await deliveries()
        #expect((snapshot.count, rows.count) == (0, 0))
        try live.resume()
        await deliveries()
        #expect((snapshot.count, rows.count) == (1, 1))
        #expect(live.sections[0].items.map(\.title) == ["w1", "w2"])
        #expect(live.lastBatch == nil, "a reload")
    }

    /// Seeded random commits (the property tests' writes): after each, the live sections
    /// are exactly the controller's snapshot, a section whose rows did not change was not
    /// notified, and `lastBatch` replays the previous state into the current one.
    @Test(arguments: [UInt64(31), 32, 33])
    func randomCommits(seed: UInt64) async throws {
        var random = SeededGenerator(seed: seed)
        let store = try Store.inMemory(schema: NotesModel.schema)
        let live = try LiveResults(store: store, request: Note.Fetches.byNotebook)
        let titles = ["a", "b", "c", "Ab", "x", "é", ""]
        var counter = 0
        for step in 0..<60 {
            // Watch every current section's rows.
            let watched = live.sections.map { section in (section.id, section.rows, Tracker { _ = section.rows }) }
            let before = live.snapshot
            try ResultsPropertyTests.randomCommit(
                store, writes: Int.random(in: 1...3, using: &random), kinds: 0..<11, titles: titles,
                counter: &counter, random: &random)
            await deliveries()
            let context = "seed \(seed), step \(step)"
            #expect(live.snapshot == live.controller.snapshot, "\(context)")
            #expect(live.sections.map(\.id) == live.snapshot.sections.map(\.id), "\(context)")
            for (section, rows) in zip(live.sections, live.snapshot.sections) {
                #expect(section.rows == rows.rows && section.value == rows.value, "\(context)")
            }
            for (id, oldRows, tracker) in watched {
                let newRows = live.snapshot.sections.first { $0.id == id }?.rows
                if newRows == oldRows || newRows == nil {
                    #expect(tracker.count == 0, "\(context): section \(id) notified without a change")
                } else {
                    #expect(tracker.count == 1, "\(context): section \(id) notified \(tracker.count) times")
                }
            }
            if let batch = live.lastBatch, live.snapshot != before {
                #expect(try batch.apply(to: before, reading: live.snapshot) == live.snapshot, "\(context)")
            }
        }
    }

    @Test("a tracking failure is published, and cleared by the next change")
    func failure() async throws {
        let (store, live, _) = try fixture()
        try await store.writer.write { db in try db.execute(sql: "UPDATE Note SET priority = 'urgent' WHERE title = 'w1'") }
        await deliveries()
        #expect((live.failure as? ValueDecodingError)?.column == "priority")
        try await store.writer.write { db in try db.execute(sql: "UPDATE Note SET priority = 'high' WHERE title = 'w1'") }
        await deliveries()
        #expect(live.failure == nil)
        #expect(live.snapshot == live.controller.snapshot)
    }
}
#endif
