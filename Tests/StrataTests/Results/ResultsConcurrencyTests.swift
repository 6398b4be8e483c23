import Dispatch
import Foundation
import GRDB
import Testing

@testable import Strata

@Suite struct ResultsConcurrencyTests {
    /// The default delivery queue is the main queue; an async consumer on the main actor gets
    /// the initial reload, then batches.
    @Test(.timeLimit(.minutes(1))) @MainActor func deliversOnTheMainQueueByDefault() async throws {
        let store = try Store.inMemory(schema: NotesModel.schema)
        let controller = try ResultsController(store: store, request: Note.Fetches.all)
        var iterator = controller.updates.makeAsyncIterator()
        let first = try await iterator.next()
        #expect(first?.batch == nil)
        _ = try await store.write { db in try db.note("a") }
        let second = try await iterator.next()
        #expect(second?.batch == ChangeBatch(itemInserts: [ItemPath(section: 0, item: 0)]))
        #expect(controller.snapshot.items.map(\.title) == ["a"])
    }

    /// A controller let go while its `updates` sequences subscribe and end on the delivery
    /// queue: every sequence ends (the controller's end reaches each on that queue; it once
    /// read the subscribers from the releasing thread while the queue changed them, and
    /// crashed). Repeated, the releases falling at different points of the queue's work.
    @Test(.timeLimit(.minutes(2))) func sequencesEndWhenTheControllerGoesAwayWhileTheySubscribeAndEnd() async throws {
        let store = try Store.inMemory(schema: NotesModel.schema)
        _ = try await store.write { db in try db.note("a") }
        let queue = DispatchQueue(label: "strata.tests.delivery")
        for round in 0..<200 {
            var controller: ResultsController<Note, NoSection>? = try ResultsController(store: store, request: Note.Fetches.all, deliveryQueue: queue)
            let kept = controller!.updates, dropped = controller!.updates
            let consumer = Task {
                var updates = 0
                for try await _ in kept { updates += 1 }
                return updates
            }
            // A sequence ended by its consumer: its end removes it on the queue.
            let cancelled = Task { for try await _ in dropped { break } }
            if round % 2 == 0 { await Task.yield() }
            controller = nil
            _ = try await cancelled.value
            let received = try await consumer.value
            #expect(received <= 1, "round \(round): \(received) updates")
        }
    }

    /// Concurrent writers on a file store (a database pool: reads run beside the writer),
    /// option changes from another thread, pause and resume: every delivered batch replays,
    /// and the end state equals a fresh fetch.
    @Test func concurrentWritersOnAFileStore() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strata-results-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Store(schema: NotesModel.schema, path: folder.appendingPathComponent("notes.sqlite").path)
        let h = try Harness(store: store, Note.Fetches.byNotebook) { db in
            for index in 0..<4 { try db.notebook("N\(index)", position: index) }
        }
        let controller = h.controller
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<4 {
                group.addTask {
                    var random = SeededGenerator(seed: UInt64(writer))
                    for step in 0..<40 {
                        let kind = Int.random(in: 0..<4, using: &random)
                        let notebook = Int64.random(in: 1...4, using: &random)
                        let title = "w\(writer)-\(step)"
                        try await Self.write(store, kind: kind, notebook: notebook, title: title)
                    }
                }
            }
            group.addTask {
                for step in 0..<20 {
                    let filter: (@Sendable (Note) -> Bool)? = { !$0.title.hasSuffix("1") }
                    controller.filter = step % 2 == 0 ? filter : nil
                    if step == 10 { controller.pause() }
                    if step == 12 { try controller.resume() }
                    try await Task.sleep(for: .milliseconds(1))
                }
            }
            try await group.waitForAll()
        }
        h.controller._checkInvariants()
        try h.check()
    }

    static func write(_ store: Store, kind: Int, notebook: Int64, title: String) async throws {
        let sql: String
        let arguments: StatementArguments
        switch kind {
        case 0, 1:
            sql = "INSERT INTO Note (title, updatedAt, notebookID) VALUES (?, ?, ?)"
            arguments = [title, day, notebook]
        case 2:
            sql = "UPDATE Note SET notebookID = ? WHERE id IN (SELECT id FROM Note ORDER BY random() LIMIT 1)"
            arguments = [notebook]
        default:
            sql = "DELETE FROM Note WHERE id IN (SELECT id FROM Note ORDER BY random() LIMIT 1)"
            arguments = []
        }
        try await store.write { db in try db.execute(sql: sql, arguments: arguments) }
    }
}
