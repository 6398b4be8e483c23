import Foundation
import StrataSyncFixture
@testable import StrataSync
import StrataTestSupport
import Synchronization
import Testing

/// A store that has never known an object reads its first pull from one snapshot of the
/// server's tables (no log is grouped by object), and ends as a state the server had, in
/// one local transaction; later pulls go on from the snapshot's log position.
@Suite("An empty store's first pull, from a snapshot", .serialized)
struct SyncSnapshotTests {
    /// How a ``Watching`` server was read.
    struct Reads: Sendable, Equatable {
        var snapshots = 0
        var snapshotBatches = 0
        var logBatches = 0
    }

    /// A server that records how it is read, and runs `during` once, after the first batch of
    /// a snapshot was handed over and before the next is read (the snapshot's transaction open).
    final class Watching: SyncServer {
        let server: PostgresSyncServer
        let reads = Mutex(Reads())
        let failure = Mutex<(any Error)?>(nil)
        let during: @Sendable () async throws -> Void

        init(_ server: PostgresSyncServer, during: @escaping @Sendable () async throws -> Void = {}) {
            self.server = server
            self.during = during
        }

        var read: Reads { reads.withLock { $0 } }

        func hello(_ hello: SyncHello) async throws -> SyncWelcome { try await server.hello(hello) }
        func push(_ push: SyncPush) async throws -> SyncPushResult { try await server.push(push) }
        func pull(_ request: SyncPullRequest) async throws -> SyncPullResult { try await server.pull(request) }
        func pullBatch(_ request: SyncPullRequest) async throws -> SyncPullBatch {
            reads.withLock { $0.logBatches += 1 }
            return try await server.pullBatch(request)
        }
        func readSnapshot(batchSize: Int, into body: @escaping @Sendable (SyncPullBatch) async -> Bool) async throws -> Bool {
            reads.withLock { $0.snapshots += 1 }
            return try await server.readSnapshot(batchSize: batchSize) { [self] batch in
                let first = reads.withLock {
                    $0.snapshotBatches += 1
                    return $0.snapshotBatches == 1
                }
                let going = await body(batch)
                if first {
                    do { try await during() } catch { failure.withLock { $0 = error } }
                }
                return going
            }
        }
        func changeSignals() async throws -> AsyncThrowingStream<Void, any Error> { try await server.changeSignals() }
    }

    /// A store and its sync with `server`, pulls of `batch` log entries (snapshots of four
    /// times as many objects), its sync's messages in `messages`.
    static func device(_ path: String, _ server: Watching, batch: Int, _ messages: SyncBulkPullTests.Messages) throws -> (Store, StoreSync) {
        let store = try Store(schema: StrataModel.schema, path: path)
        var options = SyncBulkPullTests.recording(SyncOptions(pullBatchSize: batch), messages)
        options.readsSnapshots = true
        return (store, try StoreSync(store: store, server: server, options: options))
    }

    /// The server seeded as for the bulk pulls (boards, cards of every column, labels linked
    /// to cards, bottles, deletions and updates), with crates and shelves whose count rules
    /// hold only once their links are in: their links come in the snapshot's last batches.
    static func seed(_ test: TestServer) async throws {
        try await SyncBulkPullTests.seed(test)
        try await test.psql("""
            BEGIN;
            INSERT INTO "Crate" (id, name) SELECT gen_random_uuid(), 'Crate ' || n FROM generate_series(1, 6) n;
            INSERT INTO "Shelf" (id, name) SELECT gen_random_uuid(), 'Shelf ' || n FROM generate_series(1, 4) n;
            INSERT INTO "Bottle_crates" ("bottleID", "crateID") \
            SELECT b.id, c.id FROM (SELECT id, row_number() OVER (ORDER BY name) AS i FROM "Bottle") b \
            JOIN (SELECT id, row_number() OVER (ORDER BY name) AS i FROM "Crate") c ON c.i = 1 + b.i % 6;
            UPDATE "Bottle" b SET "shelfID" = s.id FROM (SELECT id, row_number() OVER (ORDER BY name) AS i FROM "Shelf") s \
            WHERE s.i = 1 + (SELECT count(*) FROM "Bottle" o WHERE o.name < b.name) % 4;
            COMMIT;
            """)
    }

    @Test func theFirstPullOfAnEmptyStoreIsOneSnapshotAndNoTransactionAfterIt() async throws {
        let test = try await TestServer(), folder = try TemporaryDirectory()
        let maker = try Device(folder.path("maker.sqlite"), test)
        defer { Task { await maker.close() } }
        try await maker.sync.push()  // the hello makes the server's tables
        try await Self.seed(test)
        let before = try await test.contents()
        #expect(before.objectCount > 300)
        // Another service's transaction, committed while the snapshot is read: a board
        // renamed, cards deleted and added, a label linked.
        let server = Watching(try test.server()) {
            try await test.psql("""
                BEGIN;
                UPDATE "Board" SET name = name || ' (renamed)' WHERE name = 'Late board';
                DELETE FROM "Card" WHERE points % 7 = 2;
                INSERT INTO "Card" (id, title, "boardID") SELECT gen_random_uuid(), 'During ' || n, \
                (SELECT id FROM "Board" ORDER BY name DESC LIMIT 1) FROM generate_series(1, 5) n;
                INSERT INTO "Card_labels" ("cardID", "labelID") SELECT c.id, l.id FROM "Card" c, "Label" l \
                WHERE c.title LIKE 'During %' AND l.name = 'Label 1';
                COMMIT;
                """)
        }
        let messages = SyncBulkPullTests.Messages()
        let (store, sync) = try Self.device(folder.path("fresh.sqlite"), server, batch: 10, messages)
        defer { Task { await sync.stop(); await server.server.close(); try? store.close() } }
        let commits = Mutex(0)
        let observation = store.observeCommits(reading: { changes, _ in
            if changes.authors.contains(SyncOptions().author) { commits.withLock { $0 += 1 } }
        })
        defer { observation.cancel() }

        let report = try await sync.pull()
        #expect(server.failure.withLock { $0 } == nil)
        // One snapshot of many batches, no batch of the log; one commit.
        #expect(server.read.snapshots == 1)
        #expect(server.read.snapshotBatches > 5)
        #expect(server.read.logBatches == 0)
        #expect(commits.withLock { $0 } == 1)
        // The store is the server as it was before the other transaction: nothing of it, all of
        // what came before.
        let after = try await test.contents()
        #expect(after != before)
        let contents = try sync.contents()
        #expect(contents.difference(from: before) == nil, "\(contents.difference(from: before) ?? "")")
        #expect(report.pulledChanges == before.objectCount + before.links.values.reduce(0) { $0 + $1.count })
        #expect(report.conflictsWhilePulling == 0)
        #expect(try sync.conflicts().isEmpty)
        #expect(messages.all.contains { $0.contains("the store not searched") })
        #expect(!messages.all.contains { $0.contains("refused in bulk") })

        // The next pull reads the log from the snapshot's position: exactly the other
        // transaction's changes.
        let next = try await sync.pull()
        #expect(server.read.snapshots == 1)
        #expect(server.read.logBatches >= 1)
        #expect(next.pulledChanges > 0)
        #expect(try sync.contents().difference(from: after) == nil)
        // A store that read the whole log (in one batch: a count is checked after each batch of
        // the log, and a crate and its links may fall in two) ends the same.
        let byLog = try Device(folder.path("log.sqlite"), test, options: SyncBulkPullTests.options(bulk: true, batch: 5_000))
        defer { Task { await byLog.close() } }
        try await byLog.sync.sync()
        #expect(try byLog.sync.contents() == sync.contents())
    }

    /// A snapshot whose objects break a count rule of this store once all of it is in (a
    /// service bypassed the server's check): the pull is rolled back and read again from the
    /// log, change by change, what breaks the rule set aside and recorded, the rest applied. (A
    /// snapshot whose counts hold once its links are in, many batches after the crates, goes in
    /// bulk: the test above.)
    @Test func aSnapshotThatBreaksACountRuleHereIsReadAgainFromTheLog() async throws {
        let test = try await TestServer(), folder = try TemporaryDirectory()
        let maker = try Device(folder.path("maker.sqlite"), test)
        defer { Task { await maker.close() } }
        try await maker.sync.push()
        try await Self.seed(test)
        let crate = "00000000-0000-4000-8000-00000000000c"
        try await test.psql("""
            BEGIN;
            INSERT INTO "Crate" (id, name) VALUES ('\(crate)', 'Over');
            INSERT INTO "Bottle_crates" ("bottleID", "crateID") SELECT id, '\(crate)' FROM "Bottle" ORDER BY name LIMIT 3;
            COMMIT;
            ALTER TABLE "Bottle_crates" DISABLE TRIGGER strata_sync_count;
            INSERT INTO "Bottle_crates" ("bottleID", "crateID") SELECT id, '\(crate)' FROM "Bottle" ORDER BY name OFFSET 3 LIMIT 1;
            ALTER TABLE "Bottle_crates" ENABLE TRIGGER strata_sync_count;
            """)
        // Pulls of the log that hold the whole log in one batch: no count is checked between
        // two batches of the log (see SyncBulkPullTests.seed).
        let messages = SyncBulkPullTests.Messages()
        let server = Watching(try test.server())
        let (store, sync) = try Self.device(folder.path("fresh.sqlite"), server, batch: 5_000, messages)
        defer { Task { await sync.stop(); await server.server.close(); try? store.close() } }
        let report = try await sync.pull()
        #expect(server.read.snapshots == 1)
        #expect(server.read.logBatches > 0)
        #expect(messages.all.contains { $0.contains("refused in bulk") && $0.contains("maxCount 3") })
        #expect(report.conflictsWhilePulling > 0)
        let conflicts = try sync.conflicts()
        #expect(!conflicts.isEmpty && conflicts.allSatisfy { $0.kind == .notAppliedHere && $0.reason.contains("maxCount 3") })
        // Everything but what touches the crate over its count is in, as on the server.
        let overID = try #require(UUID(uuidString: crate))
        var expected = try await test.contents(), contents = try sync.contents()
        expected.objects["Crate"]?[overID] = nil
        contents.objects["Crate"]?[overID] = nil
        expected.links["Bottle_crates"] = expected.links["Bottle_crates"]?.filter { !$0.contains(crate) }
        contents.links["Bottle_crates"] = contents.links["Bottle_crates"]?.filter { !$0.contains(crate) }
        #expect(contents.difference(from: expected) == nil, "\(contents.difference(from: expected) ?? "")")
        #expect(expected.objectCount > 300)
    }
}
