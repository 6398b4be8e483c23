import Foundation
import GRDB
import Testing
@testable import Strata

/// What closing guarantees (``Store/close()``, DeleteRulesAndMigrations.md): once `close()`
/// returns, the database file alone holds every commit — it can be copied, backed up or
/// sent without its `-wal` — and the `-wal` is empty or gone. Releasing a store without
/// closing it gives the same.
@Suite("Store close")
struct StoreCloseTests {
    private static let rowCount = 3_000

    /// About 3 MB of notes, written in several transactions, the last one small (SQLite
    /// checkpoints on its own after large ones), with reads in between so that reader
    /// connections are open when the store closes.
    private func fill(_ store: Store) throws {
        for range in [0..<1_000, 1_000..<2_000, 2_000..<2_990, 2_990..<Self.rowCount] {
            try store.write { db in
                for number in range {
                    try db.insert(Note(
                        title: "note \(number)", body: String(repeating: "\(number % 10)", count: 1_000),
                        updatedAt: Date(timeIntervalSince1970: Double(number))))
                }
            }
            _ = try store.read { db in try db.fetchCount(Note.self) }
        }
        // A results controller reads too.
        let controller = try ResultsController(
            store: store, request: Note.Fetches.all, deliveryQueue: DispatchQueue(label: "strata.tests.close"))
        #expect(controller.snapshot.items.count == Self.rowCount)
        // A controller holds its store until its queue has delivered what it had pending:
        // wait, so that the store is released when the caller lets it go.
        controller.waitForDeliveries()
    }

    /// Copies the database file alone to a new folder, opens it there and checks every row.
    private func checkCopyOfFileAlone(_ path: String) throws {
        let wal = FileManager.default.contents(atPath: path + "-wal")
        #expect(wal == nil || wal?.isEmpty == true, "-wal holds \(wal?.count ?? 0) bytes")
        let elsewhere = try TemporaryDirectory()
        let copy = elsewhere.path("copy.sqlite")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        let store = try Store(schema: NotesModel.schema, path: copy)
        let notes = try store.read { db in try db.fetchAll(Note.self) }
        #expect(notes.count == Self.rowCount)
        let wrong = notes.enumerated().filter { index, note in
            note.title != "note \(index)" || note.body != String(repeating: "\(index % 10)", count: 1_000)
                || note.updatedAt != Date(timeIntervalSince1970: Double(index))
        }
        #expect(wrong.isEmpty, "\(wrong.count) rows differ")
    }

    @Test("after close() the file alone holds every commit, and the -wal is empty or gone")
    func closeCheckpoints() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        let store = try Store(schema: NotesModel.schema, path: path)
        try fill(store)
        #expect((FileManager.default.contents(atPath: path + "-wal")?.count ?? 0) > 10_000, "commits are in the -wal")
        try store.close()
        try checkCopyOfFileAlone(path)
        #expect(throws: StoreError.closed, "a closed store cannot be used") { try store.read { db in try db.count("Note") } }
        try store.close()  // closing again does nothing
    }

    @Test("every use of a closed store throws StoreError.closed")
    func useAfterClose() async throws {
        let directory = try TemporaryDirectory()
        let store = try Store(schema: NotesModel.schema, path: directory.path("notes.sqlite"))
        let note = try store.insert(Note(title: "t", updatedAt: Date()))
        try store.close()
        #expect(throws: StoreError.closed) { try store.read { db in try db.fetchCount(Note.self) } }
        #expect(throws: StoreError.closed) { try store.write { db in try db.insert(Note(title: "u", updatedAt: Date())) } }
        #expect(throws: StoreError.closed) { try store.insert(Note(title: "u", updatedAt: Date())) }
        #expect(throws: StoreError.closed) { try store.update(note) }
        #expect(throws: StoreError.closed) { try store.fetchAll(Note.self) }
        #expect(throws: StoreError.closed) { try store.changes(since: .beginning) }
        #expect(throws: StoreError.closed) { try store.checkForExternalCommits() }
        #expect(throws: StoreError.closed) {
            try ResultsController(store: store, request: Note.Fetches.all, deliveryQueue: DispatchQueue(label: "strata.tests.closed"))
        }
        await #expect(throws: StoreError.closed) { try await store.read { db in try db.fetchCount(Note.self) } }
        #expect(StoreError.closed.description == "the store is closed")
    }

    @Test("a store released without close() leaves the file self-contained too")
    func releaseCheckpoints() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        do {
            let store = try Store(schema: NotesModel.schema, path: path)
            try fill(store)
        }
        try checkCopyOfFileAlone(path)
    }

    @Test("close() checkpoints while another store on the same file stays open")
    func closeBesideAnotherStore() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        let other = try Store(schema: NotesModel.schema, path: path)
        #expect(try other.read { db in try db.count("Note") } == 0)
        let store = try Store(schema: NotesModel.schema, path: path)
        try fill(store)
        try store.close()
        try checkCopyOfFileAlone(path)
        #expect(try other.read { db in try db.count("Note") } == Self.rowCount)
    }
}
