import Foundation
import StrataSyncFixture
import StrataTestSupport
import Synchronization
import Testing

/// Every pull moves a store from one state the server had to a later one, in one local
/// transaction, however many batches it reads.
@Suite("A pull is a state the server had")
struct SyncConsistencyTests {
    /// What the store held at one commit: the two cards' points added up, and how many
    /// "filler" cards it had.
    struct Seen: Sendable, Equatable {
        var sum: Int
        var fillers: Int
    }

    @Test func aPullOfManyBatchesShowsOnlyWholeTransactionsOfAnotherService() async throws {
        let test = try await TestServer(), folder = try TemporaryDirectory()
        let a = try Device(folder.path("a.sqlite"), test)
        // Three log entries a batch: every transaction below writes four.
        let b = try Device(folder.path("b.sqlite"), test, options: SyncOptions(pullBatchSize: 3))
        defer { Task { await a.close(); await b.close() } }
        try await a.store.write { db in
            let board = try db.insert(Board(name: "Ledger"))
            _ = try db.insert(Card(title: "left", points: 50, boardID: board.id))
            _ = try db.insert(Card(title: "right", points: 50, boardID: board.id))
        }
        try await a.sync.sync()
        try await b.sync.sync()
        // Another service moves points between the two cards and adds two fillers, in one
        // transaction each time: its invariant is a sum of 100 and fillers in pairs.
        for k in 1...20 {
            try await test.psql("""
                BEGIN;
                UPDATE "Card" SET points = \(k) WHERE title = 'left';
                UPDATE "Card" SET points = \(100 - k) WHERE title = 'right';
                INSERT INTO "Card" (id, title, "boardID") SELECT gen_random_uuid(), 'filler', id FROM "Board";
                INSERT INTO "Card" (id, title, "boardID") SELECT gen_random_uuid(), 'filler', id FROM "Board";
                COMMIT;
                """)
        }
        let seen = Mutex<[Seen]>([])
        let author = SyncOptions().author
        let observation = b.store.observeCommits(reading: { changes, db in
            guard changes.authors.contains(author), !changes.isEmpty else { return }
            let sum = (try? Int.fetchOne(db, sql: "SELECT SUM(points) FROM Card WHERE title IN ('left', 'right')")) ?? -1
            let fillers = (try? Int.fetchOne(db, sql: "SELECT COUNT(*) FROM Card WHERE title = 'filler'")) ?? -1
            seen.withLock { $0.append(Seen(sum: sum, fillers: fillers)) }
        })
        defer { observation.cancel() }
        let report = try await b.sync.pull()
        #expect(report.pulledChanges >= 80)
        let states = seen.withLock { $0 }
        #expect(states == [Seen(sum: 100, fillers: 40)], "the store showed \(states)")
        #expect(try await b.store.read { db in try Int.fetchOne(db, sql: "SELECT points FROM Card WHERE title = 'left'") } == 20)
        try await a.sync.sync()
        try await expectConverged([a, b], test)
    }
}
