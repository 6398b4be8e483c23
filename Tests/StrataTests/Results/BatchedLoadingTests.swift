import Dispatch
import Foundation
import GRDB
import Testing

@testable import Strata

/// Batched loading (``ResultsLoading/batched(pageSize:cachedPages:)``), checked from its
/// documented contract: the same snapshots and batches as eager loading, values read a page
/// at a time, and a value read from a snapshot is the item's value when the snapshot was
/// made, however many commits came after it.
@Suite struct BatchedLoadingTests {
    /// A file store in a new folder (batched loading needs a file: it reads through a
    /// second connection).
    static func fileStore() throws -> (Store, URL) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strata-batched-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let store = try Store(schema: NotesModel.schema, path: folder.appendingPathComponent("notes.sqlite").path)
        return (store, folder)
    }

    /// Seeded random commits; batched controllers with pages smaller than their sections.
    /// After every step each batch validates, replays exactly on the previous snapshot (which
    /// is read after later commits), and the snapshot equals a fresh eager fetch and the SQL
    /// oracle of the eager property tests.
    @Test(arguments: [(UInt64(31), 2), (32, 3), (33, 5), (34, 1)])
    func randomCommits(seed: UInt64, pageSize: Int) throws {
        var random = SeededGenerator(seed: seed)
        let (store, folder) = try Self.fileStore()
        defer { try? FileManager.default.removeItem(at: folder) }
        let loading = ResultsLoading.batched(pageSize: pageSize, cachedPages: 2)
        typealias P = ResultsPropertyTests
        let checkers = (
            try P.Checker(store: store, request: Note.Fetches.byNotebook, forceRefetch: false, rule: P.byNotebookRule, loading: loading),
            try P.Checker(store: store, request: Note.Fetches.byPriority, forceRefetch: false, rule: P.byPriorityRule, loading: loading),
            try P.Checker(store: store, request: P.orphanRequest, forceRefetch: false, rule: P.orphanRule, loading: loading),
            try P.Checker(store: store, request: P.firstLetterRequest, forceRefetch: false, rule: P.firstLetterRule, loading: loading),
            try P.Checker(store: store, request: P.notebookNameRequest, forceRefetch: false, rule: P.notebookNameRule, loading: loading),
            try P.Checker(store: store, request: Note.Fetches.pinned, forceRefetch: false, rule: P.flatRule, loading: loading)
        )
        #expect(checkers.0.controller.snapshot.sections.allSatisfy { $0.rows.isBatched })
        let titles = ["a", "b", "c", "Ab", "ba", "x", "xy", "é", "e\u{301}", ""]
        var notebookCounter = 0
        for step in 0..<50 {
            let count = Int.random(in: 1...6, using: &random)
            try P.randomCommit(store, writes: count, kinds: 0..<11, titles: titles, counter: &notebookCounter, random: &random)
            let context = "(seed \(seed), page size \(pageSize), step \(step), \(count) writes)"
            guard try checkers.0.check(context), try checkers.1.check(context), try checkers.2.check(context),
                try checkers.3.check(context), try checkers.4.check(context), try checkers.5.check(context)
            else { return }
        }
        #expect(checkers.0.seen > 20, "seed \(seed): only \(checkers.0.seen) deliveries")
        #expect(checkers.0.controller.snapshot.sections.allSatisfy { $0.rows.isBatched })
    }

    /// Every snapshot a batched controller delivered, kept while 60 random commits follow,
    /// reads exactly what an eager controller delivered at the same step, whether a page was
    /// read before the later commits or only after them (rows deleted since included).
    @Test(arguments: [UInt64(41), 42, 43, 44])
    func oldSnapshotsReadTheirOwnValues(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let (store, folder) = try Self.fileStore()
        defer { try? FileManager.default.removeItem(at: folder) }
        try store.write { db in
            for n in 0..<4 {
                var notebook = Notebook(name: "N\(n)", createdAt: day, position: n)
                try notebook.insert(db)
                for i in 0..<12 {
                    var note = Note(title: "t\(n)-\(i)", updatedAt: day, notebookID: notebook.id)
                    try note.insert(db)
                }
            }
        }
        let queue = DispatchQueue(label: "strata.tests.batched")
        let batched = try ResultsController(
            store: store, request: Note.Fetches.byNotebook, loading: .batched(pageSize: 3, cachedPages: 2), deliveryQueue: queue)
        let eager = try ResultsController(store: store, request: Note.Fetches.byNotebook, deliveryQueue: queue)
        var kept: [(batched: ResultsSnapshot<Note, Notebook>, eager: ResultsSnapshot<Note, Notebook>, step: Int)] = []
        var counter = 100
        let titles = ["a", "b", "c", "z", "é"]
        for step in 0..<60 {
            queue.sync {}
            let snapshot = batched.snapshot
            // Read some pages now, some later, some never before the end.
            if Int.random(in: 0..<3, using: &random) == 0, let section = snapshot.sections.randomElement(using: &random),
                !section.rows.isEmpty
            {
                _ = section.rows[Int.random(in: 0..<section.rows.count, using: &random)]
            }
            kept.append((snapshot, eager.snapshot, step))
            try ResultsPropertyTests.randomCommit(
                store, writes: Int.random(in: 1...4, using: &random), kinds: 0..<11, titles: titles, counter: &counter,
                random: &random)
        }
        queue.sync {}
        kept.append((batched.snapshot, eager.snapshot, 60))
        for (snapshot, expected, step) in kept.shuffled(using: &random) {
            #expect(snapshot.rowCounts == expected.rowCounts, "seed \(seed), step \(step)")
            #expect(snapshot.items == expected.items, "seed \(seed): the snapshot of step \(step) reads other values")
            #expect(snapshot == expected, "seed \(seed), step \(step)")
        }
    }

    /// Opening reads ids and keys only; a row read loads its page (one statement for the
    /// page); a one-row commit re-reads that row's keys and loads no page.
    @Test func pagesAreLoadedWhenRead() throws {
        let (store, folder) = try Self.fileStore()
        defer { try? FileManager.default.removeItem(at: folder) }
        try store.write { db in
            var notebook = Notebook(name: "Work", createdAt: day)
            try notebook.insert(db)
            for i in 0..<100 {
                var note = Note(title: String(format: "n%03d", i), updatedAt: day, notebookID: notebook.id)
                try note.insert(db)
            }
        }
        let trace = store.traceStatements()
        let queue = DispatchQueue(label: "strata.tests.batched")
        let controller = try ResultsController(
            store: store, request: Note.Fetches.byNotebook, loading: .batched(pageSize: 10, cachedPages: 3), deliveryQueue: queue)
        #expect(
            !trace.statements.contains { ItemReads.readsWholeNotes($0) },
            "the open read whole rows:\n\(trace.statements)")
        let snapshot = controller.snapshot
        let rows = snapshot.sections[0].rows
        #expect(rows.count == 100 && rows.isBatched)
        let pages = try #require(rows.batchedPages as? BatchedPages<Note>)
        #expect(pages.pagesLoaded == 0)
        #expect(rows[15].item?.title == "n015")
        #expect(pages.pagesLoaded == 1)
        #expect(rows[19].item?.title == "n019")
        #expect(rows[10].item?.title == "n010")
        #expect(pages.pagesLoaded == 1, "rows of a loaded page are read again")
        // Three pages are kept; a fourth evicts the first, which is then read again.
        _ = rows[25]; _ = rows[35]; _ = rows[45]
        #expect(pages.pagesLoaded == 4)
        _ = rows[12]
        #expect(pages.pagesLoaded == 5)
        #expect(try rows.item(at: 99)?.title == "n099")

        trace.removeAll()
        try store.write { db in
            var note = try #require(try Note.filter(Column("title") == "n050").fetchOne(db))
            note.title = "n000a"
            try note.update(db)
        }
        queue.sync {}
        // The controller re-reads the row's keys, then binary search reads the sort keys of
        // the rows it visits (at most ⌈log2(100)⌉ + 1), and loads no page.
        let reads = trace.statements.filter {
            $0.contains("FROM \"Note\"") && $0.hasPrefix("SELECT") && !$0.contains("\"title\" = ")  // the write's own read
        }
        let reRead = reads.filter { $0.hasPrefix("SELECT t0.\"id\", ") }
        let probes = reads.filter { $0.hasSuffix("WHERE t0.\"id\" = ?") || $0.contains("WHERE t0.\"id\" = ") }
        #expect(reRead.count == 1, "\(reads)")
        #expect(probes.count >= 1 && probes.count <= 8, "\(reads)")
        #expect(!reads.contains { ItemReads.readsWholeNotes($0) }, "\(reads)")
        let next = controller.snapshot
        #expect(next.sections[0].rows[1].item?.title == "n000a")
        // The old snapshot still reads its own value at its own place.
        #expect(rows[50].item?.title == "n050")
    }

    /// A filter on a batched controller reads every value once and turns it eager; the
    /// batch from the batched snapshot to the filtered one is valid.
    @Test func aFilterMakesTheControllerEager() throws {
        let (store, folder) = try Self.fileStore()
        defer { try? FileManager.default.removeItem(at: folder) }
        try store.write { db in
            var notebook = Notebook(name: "Work", createdAt: day)
            try notebook.insert(db)
            for i in 0..<20 {
                var note = Note(title: "n\(i)", updatedAt: day, notebookID: notebook.id)
                try note.insert(db)
            }
        }
        let queue = DispatchQueue(label: "strata.tests.batched")
        let controller = try ResultsController(
            store: store, request: Note.Fetches.byNotebook, loading: .batched(pageSize: 4), deliveryQueue: queue)
        let recorder = DeliveryRecorder<Note, Notebook>()
        controller.coordinate(recorder)
        queue.sync {}
        var shown = controller.snapshot
        controller.filter = { $0.title.count == 2 }
        queue.sync {}
        #expect(replayBatches(recorder.updates[1...], on: &shown, "filter"))
        #expect(!controller.snapshot.sections[0].rows.isBatched)
        #expect(controller.snapshot.items.map(\.title) == (0..<10).map { "n\($0)" }.sorted())
    }

    /// After the store closes, the latest snapshot's pages read the file as it is then,
    /// which is the snapshot's state; the close still leaves only the database file.
    @Test func readingAfterClose() throws {
        let (store, folder) = try Self.fileStore()
        defer { try? FileManager.default.removeItem(at: folder) }
        try store.write { db in
            var notebook = Notebook(name: "Work", createdAt: day)
            try notebook.insert(db)
            for i in 0..<30 {
                var note = Note(title: String(format: "n%02d", i), updatedAt: day, notebookID: notebook.id)
                try note.insert(db)
            }
        }
        let controller = try ResultsController(
            store: store, request: Note.Fetches.byNotebook, loading: .batched(pageSize: 5),
            deliveryQueue: DispatchQueue(label: "strata.tests.batched"))
        let snapshot = controller.snapshot
        try store.close()
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(leftovers == ["notes.sqlite"])
        #expect(snapshot.items.map(\.title) == (0..<30).map { String(format: "n%02d", $0) })
    }

    /// A value another program stored in a form Strata refuses opens fine (values are not
    /// read) and is refused when its page is read: `item(at:)` throws the decoding error;
    /// rows of other pages read.
    @Test func aValueStrataRefusesThrowsWhenItsPageIsRead() throws {
        let (store, folder) = try Self.fileStore()
        defer { try? FileManager.default.removeItem(at: folder) }
        try store.write { db in
            var notebook = Notebook(name: "Work", createdAt: day)
            try notebook.insert(db)
            for i in 0..<8 {
                var note = Note(title: "n\(i)", updatedAt: day, notebookID: notebook.id)
                try note.insert(db)
            }
        }
        try store.writer.write { db in try db.execute(sql: "UPDATE Note SET priority = 'urgent' WHERE title = 'n6'") }
        let controller = try ResultsController(
            store: store, request: Note.Fetches.byNotebook, loading: .batched(pageSize: 4),
            deliveryQueue: DispatchQueue(label: "strata.tests.batched"))
        let rows = controller.snapshot.sections[0].rows
        #expect(try rows.item(at: 0)?.title == "n0")
        do {
            _ = try rows.item(at: 6)
            Issue.record("the stored value was not refused")
        } catch let error as ValueDecodingError {
            #expect(error.entity == "Note" && error.column == "priority" && error.storedValue == "urgent".databaseValue)
        }
    }

    /// Setting a filter reads every value; when that read fails (a value another program
    /// wrote that the type cannot represent), the options stay as they were, the error goes
    /// to the consumers, and the controller stays batched and goes on; once the value is
    /// repaired, the same filter turns it eager.
    @Test func aFilterWhoseReadFailsLeavesTheControllerAsItWas() throws {
        let (store, folder) = try Self.fileStore()
        defer { try? FileManager.default.removeItem(at: folder) }
        try store.write { db in
            var notebook = Notebook(name: "Work", createdAt: day)
            try notebook.insert(db)
            for i in 0..<12 {
                var note = Note(title: "n\(i)", updatedAt: day, notebookID: notebook.id)
                try note.insert(db)
            }
        }
        let queue = DispatchQueue(label: "strata.tests.batched")
        let controller = try ResultsController(
            store: store, request: Note.Fetches.byNotebook, loading: .batched(pageSize: 4), deliveryQueue: queue)
        let failures = DeliveryRecorder<Note, Notebook>(recording: .failures)
        controller.coordinate(failures)
        try store.writer.write { db in try db.execute(sql: "UPDATE Note SET priority = 'urgent' WHERE title = 'n9'") }
        controller.waitForDeliveries()
        #expect(failures.errors.isEmpty, "a batched commit reads keys, not values")

        controller.filter = { $0.title.count == 2 }
        controller.waitForDeliveries()
        #expect((failures.errors.first as? ValueDecodingError)?.column == "priority")
        #expect(controller.filter == nil, "the options stay as they were")
        #expect(controller.engineForTesting.isBatched)
        #expect(controller.snapshot.sections[0].rows.isBatched)
        #expect(controller.snapshot.sections[0].rows.count == 12)

        // The controller goes on: a commit still reaches it, batched; the repair is a batch,
        // not a failure. A snapshot made before it still shows n9 as it was: reading that
        // row throws the error its page read gives, its other rows read as they were.
        let before = controller.snapshot
        try store.write { db in try db.execute(sql: "UPDATE Note SET priority = 'normal' WHERE title = 'n9'") }
        try store.write { db in
            var note = Note(title: "n12", updatedAt: day, notebookID: try Notebook.fetchOne(db)?.id)
            try note.insert(db)
        }
        controller.waitForDeliveries()
        #expect(failures.errors.count == 1, "the repair and the insert are batches: \(failures.errors)")
        #expect(controller.snapshot.sections[0].rows.count == 13)
        let oldRows = before.sections[0].rows
        #expect(throws: ValueDecodingError.self) { try oldRows.item(at: 11) }
        #expect(try oldRows.item(at: 10)?.title == "n8")
        #expect(try controller.snapshot.sections[0].rows.item(at: 12)?.priority == .normal)
        controller.filter = { $0.title.count == 2 }
        controller.waitForDeliveries()
        #expect(failures.errors.count == 1)
        #expect(!controller.engineForTesting.isBatched)
        #expect(controller.snapshot.items.map(\.title) == (0..<10).map { "n\($0)" }.sorted())
    }

    /// An in-memory store has no second connection: the controller loads eagerly.
    @Test func inMemoryStoresLoadEagerly() throws {
        let store = try Store.inMemory(schema: NotesModel.schema)
        let controller = try ResultsController(
            store: store, request: Note.Fetches.pinned, loading: .batched(),
            deliveryQueue: DispatchQueue(label: "strata.tests.batched"))
        #expect(!controller.engineForTesting.isBatched)
    }
}
