import Foundation
import GRDB
import Testing
@testable import Strata

/// The store's write-ahead log is checkpointed and started over as SQLite does by itself
/// (about every 1,000 pages), also while a batched controller pins a read transaction to
/// each of its snapshots: that pin made SQLite's own checkpoint, which runs inside each
/// commit, unable to start the log over, so the log grew with every commit and each commit
/// paid two syncs of the disk. Checked on the file: the `-wal` stays bounded.
@Suite("Write-ahead log checkpoints")
struct WALCheckpointTests {
    /// About 1,000 pages of log and the pages of one commit: what the log may hold when it
    /// is started over at SQLite's threshold.
    static let boundPages = 1_400

    /// An eager controller, one batched controller, two batched controllers.
    @Test("the log stays bounded through many commits", arguments: [0, 1, 2])
    func logStaysBounded(batchedControllers: Int) throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("wal.sqlite")
        let store = try Store(schema: NotesModel.schema, path: path, options: Store.Options(externalCommitInterval: nil))
        defer { try? store.close() }
        let day = Date(timeIntervalSince1970: 1_700_000_000)
        try store.write { db in
            var notebook = Notebook(name: "Work", createdAt: day)
            try notebook.insert(db)
            for i in 0..<500 {
                var note = Note(title: "n\(i)", updatedAt: day, notebookID: notebook.id)
                try note.insert(db)
            }
        }
        let queue = DispatchQueue(label: "strata.tests.wal")
        let controller = try ResultsController(
            store: store, request: Note.Fetches.byNotebook,
            loading: batchedControllers > 0 ? .batched(pageSize: 20, cachedPages: 2) : .eager, deliveryQueue: queue)
        let second = batchedControllers > 1
            ? try ResultsController(
                store: store, request: Note.Fetches.byNotebook, loading: .batched(pageSize: 7, cachedPages: 1), deliveryQueue: queue)
            : nil
        var snapshots: [ResultsSnapshot<Note, Notebook>] = []
        let pageSize = try store.read { db in try Int.fetchOne(db, sql: "PRAGMA page_size")! }
        var largest = 0
        for step in 0..<2_500 {
            try store.write { db in
                try db.execute(sql: "UPDATE Note SET title = ? WHERE id = ?", arguments: ["t\(step)", Int64(step % 500 + 1)])
            }
            if step % 100 == 0 {
                // A snapshot kept alive, reading a page: what a list view does.
                queue.sync {}
                let snapshot = controller.snapshot
                _ = snapshot.sections[0].rows[step % 500]
                snapshots.append(snapshot)
                if snapshots.count > 3 { snapshots.removeFirst() }
            }
            let size = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
            largest = max(largest, size)
        }
        queue.sync {}
        #expect(largest / pageSize < Self.boundPages, "the -wal grew to \(largest / pageSize) pages")
        // The results are still those of the file.
        let titles = try store.read { db in try String.fetchAll(db, sql: "SELECT title FROM Note ORDER BY title, id") }
        #expect(controller.snapshot.items.map(\.title).sorted() == titles.sorted())
        if let second { #expect(second.snapshot.items.map(\.title).sorted() == titles.sorted()) }
    }
}
