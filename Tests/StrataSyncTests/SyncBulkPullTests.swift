import Foundation
import GRDB
import Logging
import StrataSyncFixture
@testable import StrataSync
import StrataTestSupport
import Testing

/// A pull's batch of objects new to the store (an initial sync) is inserted in bulk; the file
/// must end exactly as when the same batches go change by change, and a batch that a rule of
/// the store refuses falls back to that way and is reported as it always was.
@Suite("Objects new to the store, pulled in bulk", .serialized)
struct SyncBulkPullTests {
    /// Options with the bulk path on or off, and small pulls so that a sync takes many batches.
    /// An empty store's first pull reads the log here, as later pulls do, so that the two
    /// ways apply the same batches (`snapshot`: from the server's snapshot where it offers one;
    /// see SyncSnapshotTests).
    static func options(bulk: Bool, batch: Int = 37, snapshot: Bool = false) -> SyncOptions {
        var options = SyncOptions(pullBatchSize: batch)
        options.insertsInBulk = bulk
        options.readsSnapshots = snapshot
        return options
    }

    /// The server's content: boards, cards with every column (some NULL), labels linked to
    /// cards, bottles, and objects made then deleted or updated, so that the log holds
    /// deletions and repeated entries. (No crates or shelves: their `minCount` cannot hold
    /// between two pull batches when an owner and its links fall in different batches; see
    /// the fallback test for counts.)
    static func seed(_ test: TestServer) async throws {
        try await test.psql("""
            BEGIN;
            INSERT INTO "Board" (id, name, position) SELECT gen_random_uuid(), 'Board ' || n, n % 7 FROM generate_series(1, 12) n;
            INSERT INTO "Card" (id, title, stage, points, estimate, small, done, due, token, blob, price, link, "boardID") \
            SELECT gen_random_uuid(), 'Card "' || n || E'"\\n/é', (ARRAY['todo', 'doing', 'done'])[1 + n % 3], n % 101, n * 0.25, \
            (n % 200 - 100)::smallint, n % 2 = 0, \
            CASE WHEN n % 5 = 0 THEN NULL ELSE timestamptz '2026-01-01 00:00:00+00' + n * interval '1 minute' END, \
            CASE WHEN n % 4 = 0 THEN NULL ELSE gen_random_uuid() END, CASE WHEN n % 3 = 0 THEN NULL ELSE decode(md5(n::text), 'hex') END, \
            CASE WHEN n % 6 = 0 THEN NULL ELSE (n * 0.01)::numeric(12, 2) END, 'https://example.com/cards/' || n, b.id \
            FROM generate_series(1, 300) n \
            JOIN (SELECT id, (row_number() OVER (ORDER BY name)) - 1 AS i FROM "Board") b ON b.i = n % 12;
            INSERT INTO "Label" (id, name) SELECT gen_random_uuid(), 'Label ' || n FROM generate_series(1, 5) n;
            INSERT INTO "Card_labels" ("cardID", "labelID") \
            SELECT c.id, l.id FROM "Card" c JOIN "Label" l ON (hashtext(c.id::text || l.id::text) & 3) = 0;
            INSERT INTO "Bottle" (id, name) SELECT gen_random_uuid(), 'Bottle ' || n FROM generate_series(1, 8) n;
            COMMIT;
            DELETE FROM "Card" WHERE points % 17 = 3;
            UPDATE "Card" SET title = title || ' (again)' WHERE points % 13 = 1;
            INSERT INTO "Board" (id, name, position) VALUES (gen_random_uuid(), 'Late board', 99);
            INSERT INTO "Card" (id, title, "boardID") SELECT gen_random_uuid(), 'Late card ' || n, \
            (SELECT id FROM "Board" WHERE name = 'Late board') FROM generate_series(1, 20) n;
            """)
    }

    /// A device whose hello made the server's tables (a push), then the server seeded.
    static func deviceOfSeededServer(_ test: TestServer, _ folder: TemporaryDirectory) async throws -> Device {
        let device = try Device(folder.path("store.sqlite"), test, options: options(bulk: true, batch: 5_000))
        try await device.sync.push()
        try await seed(test)
        return device
    }

    /// Two devices, one pulling in bulk (its log recorded in `messages`), one change by change,
    /// whose hellos made the server's tables; then the server seeded.
    static func bulkAndByChangeOfSeededServer(
        _ test: TestServer, _ folder: TemporaryDirectory, _ messages: Messages
    ) async throws -> (bulk: Device, byChange: Device) {
        let bulk = try Device(folder.path("bulk.sqlite"), test, options: recording(options(bulk: true), messages))
        let byChange = try Device(folder.path("one.sqlite"), test, options: options(bulk: false))
        try await bulk.sync.push()
        try await byChange.sync.push()
        try await seed(test)
        return (bulk, byChange)
    }

    /// The bulk path's applier for `device`'s store.
    static func applier(_ device: Device) throws -> PullApplier {
        PullApplier(tables: try SyncedTables(schema: StrataModel.schema, only: nil), options: options(bulk: true), store: device.store)
    }

    /// Everything a pull writes in the store file, line by line: every table's rows by local key
    /// (entities, join tables, sync ids and bases, agreed links, the sync's state but the
    /// device's and server's ids, conflicts but their dates), and the change history (each
    /// transaction's author and changes). `replacing`: text to replace (ids made here).
    static func dump(_ device: Device, replacing: [String: String] = [:]) throws -> [String] {
        try dump(device.store, replacing: replacing)
    }

    /// ``dump(_:replacing:)`` of a store.
    static func dump(_ store: Store, replacing: [String: String] = [:]) throws -> [String] {
        var lines = try store.read { db -> [String] in
            var lines: [String] = []
            let names = try String.fetchAll(db, sql: """
                SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' \
                AND name NOT IN ('strata_history', 'stratasync_conflicts', 'stratasync_state', 'stratasync_applying') ORDER BY name
                """)
            for name in names {
                // The sync's tables have no rowid, and keep sync ids as 16 bytes: written as text.
                let order = ["stratasync_tombstones": "1", "stratasync_base": "1, 2, 3", "stratasync_links": "1, 2, 3"][name] ?? "rowid"
                for row in try Row.fetchAll(db, sql: "SELECT * FROM \(name) ORDER BY \(order)") {
                    let cells = row.columnNames.map { column -> String in
                        let value: DatabaseValue = row[column]
                        if name.hasPrefix("stratasync_"), case .blob(let data) = value.storage, data.count == 16 {
                            return "\(column):\"\(LocalSyncState.text(data))\""
                        }
                        return "\(column):\(value)"
                    }
                    lines.append("\(name) [\(cells.joined(separator: " "))]")
                }
            }
            for row in try Row.fetchAll(db, sql: "SELECT * FROM stratasync_state WHERE key NOT IN ('device', 'server') ORDER BY key") {
                lines.append("state \(row)")
            }
            for row in try Row.fetchAll(db, sql: "SELECT seq, tbl, object, kind, reason, local, server FROM stratasync_conflicts ORDER BY seq") {
                lines.append("conflict \(row)")
            }
            return lines
        }
        for transaction in try store.changes(since: .beginning).transactions {
            let tables = transaction.changes.tables.sorted { $0.key < $1.key }.map { table, changes in
                "\(table): +\(changes.inserted.sorted()) ~\(changes.updated.sorted()) -\(changes.deleted.sorted()) "
                    + "\(changes.updatedColumns.sorted()) \(changes.joinRows.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.sorted { $0.key < $1.key })" })"
            }
            lines.append("history \(transaction.token.rawValue) \(transaction.author ?? "-") \(tables) \(transaction.changes.invalidatedTables.sorted())")
        }
        for (text, replacement) in replacing {
            lines = lines.map { $0.replacingOccurrences(of: text, with: replacement) }
        }
        return lines
    }

    static func expectSame(_ bulk: [String], _ byChange: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(bulk.count == byChange.count, "\(bulk.count) lines in bulk, \(byChange.count) change by change", sourceLocation: sourceLocation)
        if let index = bulk.indices.first(where: { $0 < byChange.count && bulk[$0] != byChange[$0] }) {
            Issue.record("first difference, line \(index):\n  bulk:           \(bulk[index])\n  change by change: \(byChange[index])", sourceLocation: sourceLocation)
        }
    }

    /// Records the debug messages of a sync (to see which way a batch went).
    final class Messages: @unchecked Sendable {
        let lock = NSLock()
        var lines: [String] = []
        func append(_ line: String) { lock.withLock { lines.append(line) } }
        var all: [String] { lock.withLock { lines } }
        func clear() { lock.withLock { lines = [] } }
    }

    struct Recorder: LogHandler {
        let messages: Messages
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .debug
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) { messages.append("\(event.message)") }
    }

    static func recording(_ options: SyncOptions, _ messages: Messages) -> SyncOptions {
        var options = options
        options.logger = Logger(label: "strata.sync.test") { _ in Recorder(messages: messages) }
        return options
    }

    @Test func anInitialSyncInBulkWritesWhatChangeByChangeWrites() async throws {
        let test = try await TestServer(), folder = try TemporaryDirectory()
        let messages = Messages()
        let (bulk, byChange) = try await Self.bulkAndByChangeOfSeededServer(test, folder, messages)
        defer { Task { await bulk.close(); await byChange.close() } }
        let controller = try ResultsController(store: bulk.store, request: Card.Fetches.byBoard)

        let bulkReport = try await bulk.sync.sync()
        let byChangeReport = try await byChange.sync.sync()
        #expect(bulkReport == byChangeReport)
        #expect(bulkReport.pulledChanges > 300)
        #expect(bulkReport.conflictsWhilePulling == 0)
        #expect(messages.all.contains { $0.contains("inserted in bulk") })
        #expect(!messages.all.contains { $0.contains("refused in bulk") })
        Self.expectSame(try Self.dump(bulk), try Self.dump(byChange))
        try await expectConverged([bulk, byChange], test)

        // A live controller received the pulls' commits: it lists what a fresh one lists.
        controller.waitForDeliveries()
        let fresh = try ResultsController(store: bulk.store, request: Card.Fetches.byBoard)
        fresh.waitForDeliveries()
        #expect(controller.snapshot.items.map(\.id) == fresh.snapshot.items.map(\.id))
        #expect(controller.snapshot.items.map(\.title) == fresh.snapshot.items.map(\.title))
        #expect(controller.snapshot.rowCounts == fresh.snapshot.rowCounts)

        // Later pulls of new objects (inserted on the server after the first sync) go in bulk
        // too, their references to objects pulled before included, and end the same.
        try await test.psql("""
            INSERT INTO "Card" (id, title, "boardID") SELECT gen_random_uuid(), 'Later ' || n, \
            (SELECT id FROM "Board" ORDER BY name LIMIT 1) FROM generate_series(1, 50) n;
            INSERT INTO "Label" (id, name) VALUES (gen_random_uuid(), 'Later label');
            INSERT INTO "Card_labels" ("cardID", "labelID") SELECT c.id, l.id FROM "Card" c, "Label" l \
            WHERE c.title LIKE 'Later %' AND l.name = 'Later label';
            """)
        #expect(try await bulk.sync.sync() == (try await byChange.sync.sync()))
        Self.expectSame(try Self.dump(bulk), try Self.dump(byChange))
        try await expectConverged([bulk, byChange], test)
    }

    /// A pull that begins on a store without sync ids takes each batch none of whose objects
    /// came in an earlier batch for new without searching the store; batches that hold such
    /// an object (updated on the server after it was logged) are searched as before. The file
    /// ends as change by change.
    @Test func anInitialSyncTakesItsBatchesForNewWithoutSearchingTheStore() async throws {
        let test = try await TestServer(), folder = try TemporaryDirectory()
        let messages = Messages()
        let (bulk, byChange) = try await Self.bulkAndByChangeOfSeededServer(test, folder, messages)
        defer { Task { await bulk.close(); await byChange.close() } }
        #expect(try await bulk.sync.sync() == (try await byChange.sync.sync()))
        let notSearched = messages.all.filter { $0.contains("inserted in bulk (the store not searched)") }
        #expect(!notSearched.isEmpty)
        // The seed's updates and deletions log objects again in later batches: those batches
        // were searched, and went change by change.
        #expect(notSearched.count < messages.all.filter { $0.hasPrefix("pull ") }.count)
        #expect(!messages.all.contains { $0.contains("refused in bulk") })
        Self.expectSame(try Self.dump(bulk), try Self.dump(byChange))
        try await expectConverged([bulk, byChange], test)

        // A later pull, on a store that has sync ids, searches the store.
        messages.clear()
        try await test.psql("""
            INSERT INTO "Card" (id, title, "boardID") SELECT gen_random_uuid(), 'Later ' || n, \
            (SELECT id FROM "Board" ORDER BY name LIMIT 1) FROM generate_series(1, 50) n;
            """)
        #expect(try await bulk.sync.sync() == (try await byChange.sync.sync()))
        #expect(messages.all.contains { $0.contains("inserted in bulk") })
        #expect(!messages.all.contains { $0.contains("the store not searched") })
        Self.expectSame(try Self.dump(bulk), try Self.dump(byChange))
    }

    /// A batch taken for new without searching the store, that holds objects the store knows
    /// after all: the insert of their sync ids refuses it, the transaction is rolled back, and
    /// nothing of it is left (the sync then applies it change by change).
    @Test func aBatchWronglyTakenForNewIsRefusedByItsSyncIDs() async throws {
        let test = try await TestServer(), folder = try TemporaryDirectory()
        let device = try await Self.deviceOfSeededServer(test, folder)
        defer { Task { await device.close() } }
        try await device.sync.sync()
        // Every object of the server, as a pull from the log's beginning reads them: all of
        // them are known here, some of them as tombstones.
        try await device.store.write { db in
            try db.execute(sql: "DELETE FROM Card WHERE id IN (SELECT id FROM Card ORDER BY id LIMIT 3)")
        }
        let server = try test.server()
        defer { Task { await server.close() } }
        let result = try await server.pull(SyncPullRequest(device: UUID(), cursor: 0, limit: 100_000))
        let applier = try Self.applier(device)
        let prepared = try #require(applier.prepare(result.changes))
        #expect(prepared.count > 300)
        let before = try Self.dump(device)
        await #expect(throws: PullApplier.BulkInsertRefused.self) {
            try await device.store.write { db in _ = try applier.apply(result.changes, prepared: prepared, assumingNew: true, db) }
        }
        Self.expectSame(try Self.dump(device), before)
        // Searched, the same batch is not taken for new: it goes change by change.
        let report = try await device.store.write { db in try applier.apply(result.changes, prepared: prepared, db) }
        #expect(report == false)
    }

    /// The bulk insert's statements hold thousands of rows each; with a few rows per statement
    /// (several full statements and a shorter last one per run of rows), the file ends the same.
    @Test func bulkStatementsOfAFewRowsEachWriteWhatChangeByChangeWrites() async throws {
        let test = try await TestServer(), folder = try TemporaryDirectory()
        let messages = Messages()
        var options = Self.options(bulk: true, batch: 150)
        options.bulkStatementValues = 30  // 7 sync ids and bases, or 2 cards, per statement
        let bulk = try Device(folder.path("bulk.sqlite"), test, options: Self.recording(options, messages))
        let byChange = try Device(folder.path("one.sqlite"), test, options: Self.options(bulk: false, batch: 150))
        defer { Task { await bulk.close(); await byChange.close() } }
        try await bulk.sync.push()  // the hello makes the server's tables
        try await byChange.sync.push()
        try await Self.seed(test)
        #expect(try await bulk.sync.sync() == (try await byChange.sync.sync()))
        #expect(messages.all.contains { $0.contains("inserted in bulk") })
        #expect(!messages.all.contains { $0.contains("refused in bulk") })
        Self.expectSame(try Self.dump(bulk), try Self.dump(byChange))
        try await expectConverged([bulk, byChange], test)
    }

    /// The bulk insert binds strings from their own bytes; SQLite must get what GRDB binds
    /// (the change-by-change way's), empty strings, NUL bytes and non-ASCII text included.
    /// The bulk insert binds each value from its batch's bytes (`NewObjects.bytes`), where
    /// they are: what SQLite then holds is what GRDB's binding of the same value gives, at the
    /// edges of every storage class.
    @Test func bulkValuesAreBoundAsGRDBBindsThem() throws {
        let strings = ["", "a", "Card \"1\"\n/é", "before\u{0}after", "\u{0}", String(repeating: "ü", count: 300), "🧪 x"]
        let data = [
            Data(), Data(capacity: 8), Data([1, 2, 3]).prefix(0), Data([0]), Data([0, 1, 0, 255]), Data((0..<300).map { UInt8($0 % 256) }),
            Data([7, 8, 9]).dropFirst(),
        ]
        let doubles = [
            0.0, -0.0, 1.5, -1e300, .greatestFiniteMagnitude, .leastNonzeroMagnitude, .leastNormalMagnitude, .infinity, -.infinity, .nan,
        ]
        let values: [DatabaseValue] =
            [.null] + strings.map(\.databaseValue) + data.map(\.databaseValue) + doubles.map(\.databaseValue)
            + [Int64.min, -1, 0, 1, Int64.max].map(\.databaseValue)
        var new = PullApplier.NewObjects()
        new.bytes = [42]  // values do not start at the first byte
        let bulk = values.map { new.append(StoredValue($0)) }
        let queue = try DatabaseQueue()
        try queue.read { db in
            let sql = "SELECT quote(?1), typeof(?1), length(CAST(?1 AS BLOB)), ?1 IS NULL"
            try new.bytes.withUnsafeBytes { bytes in
                for (value, bulk) in zip(values, bulk) {
                    let statement = try db.makeStatement(sql: sql)
                    statement.setUncheckedArguments(StatementArguments())
                    var index: CInt = 1
                    try PullApplier.bind(bulk, bytes.baseAddress, to: statement, at: &index)
                    let ours = try #require(try Row.fetchOne(statement))
                    let grdb = try #require(try Row.fetchOne(db, sql: sql, arguments: [value]))
                    #expect(ours == grdb, "\(value): \(ours) vs \(grdb)")
                }
            }
        }
    }

    @Test func aBulkBatchThatARuleHereRefusesFallsBackAndIsReportedAsBefore() async throws {
        let test = try await TestServer(), folder = try TemporaryDirectory()
        let messages = Messages()
        let bulk = try Device(folder.path("bulk.sqlite"), test, options: Self.recording(Self.options(bulk: true, batch: 5_000), messages))
        let byChange = try Device(folder.path("one.sqlite"), test, options: Self.options(bulk: false, batch: 5_000))
        defer { Task { await bulk.close(); await byChange.close() } }
        try await bulk.sync.push()  // the hello makes the server's tables
        try await byChange.sync.push()
        let crate = "00000000-0000-4000-8000-00000000000c"
        try await test.psql("""
            BEGIN;
            INSERT INTO "Crate" (id, name) VALUES ('\(crate)', 'Full');
            INSERT INTO "Bottle" (id, name) SELECT ('00000000-0000-4000-8000-00000000000' || n)::uuid, 'Bottle ' || n FROM generate_series(1, 3) n;
            INSERT INTO "Bottle_crates" ("bottleID", "crateID") \
            SELECT ('00000000-0000-4000-8000-00000000000' || n)::uuid, '\(crate)' FROM generate_series(1, 3) n;
            COMMIT;
            """)
        #expect(try await bulk.sync.sync() == (try await byChange.sync.sync()))

        // A service that bypassed the server's count check adds a fourth bottle to the crate,
        // with new boards: this store's maxCount 3 refuses the batch in bulk; change by change,
        // the link is set aside and recorded, and the rest applied.
        try await test.psql("""
            INSERT INTO "Board" (id, name, position) SELECT gen_random_uuid(), 'Board ' || n, n FROM generate_series(1, 20) n;
            ALTER TABLE "Bottle_crates" DISABLE TRIGGER strata_sync_count;
            INSERT INTO "Bottle" (id, name) VALUES ('00000000-0000-4000-8000-000000000004', 'Bottle 4');
            INSERT INTO "Bottle_crates" ("bottleID", "crateID") VALUES ('00000000-0000-4000-8000-000000000004', '\(crate)');
            ALTER TABLE "Bottle_crates" ENABLE TRIGGER strata_sync_count;
            """)
        var reports = (try await bulk.sync.pull(), try await byChange.sync.pull())
        #expect(messages.all.contains { $0.contains("refused in bulk") && $0.contains("maxCount 3") })
        #expect(reports.0 == reports.1)
        #expect(reports.0.pulledChanges == 20 + 1 + 1)
        #expect(reports.0.conflictsWhilePulling == 1)
        #expect(try bulk.sync.conflicts().last?.reason.contains("maxCount 3") == true)
        #expect(try await bulk.store.fetchCount(Board.self) == 20)
        #expect(try await bulk.store.fetchCount(Bottle.self) == 4)
        Self.expectSame(try Self.dump(bulk), try Self.dump(byChange))
        // The server back in range; the next pulls read it again from the start (every object
        // known: change by change) and converge.
        try await test.psql("DELETE FROM \"Bottle_crates\" WHERE \"bottleID\" = '00000000-0000-4000-8000-000000000004'")
        #expect(try await bulk.sync.sync() == (try await byChange.sync.sync()))
        try await expectConverged([bulk, byChange], test)

        // Each device made "Taken" and has not pushed it; the service adds boards, one of them
        // named "Taken": the unique name refuses the batch in bulk; change by change, that
        // board is recorded and the others applied.
        messages.clear()
        for device in [bulk, byChange] {
            try await device.store.write { db in _ = try db.insert(Board(name: "Taken")) }
        }
        try await test.psql("""
            INSERT INTO "Board" (id, name, position) SELECT gen_random_uuid(), 'More ' || n, n FROM generate_series(1, 50) n;
            INSERT INTO "Board" (id, name, position) VALUES (gen_random_uuid(), 'Taken', 99);
            """)
        reports = (try await bulk.sync.pull(), try await byChange.sync.pull())
        #expect(messages.all.contains { $0.contains("refused in bulk") && $0.contains("UNIQUE") })
        #expect(reports.0 == reports.1)
        #expect(reports.0.pulledChanges == 51)
        #expect(reports.0.conflictsWhilePulling == 1)
        let conflict = try #require(try bulk.sync.conflicts().last)
        #expect(conflict.kind == .notAppliedHere)
        #expect(conflict.table == "Board")
        #expect(try await bulk.store.fetchCount(Board.self) == 20 + 50 + 1)
        // The boards each device made itself have random sync ids; all else is the same.
        let taken = { (device: Device) throws -> String in
            try device.store.read { db in
                LocalSyncState.text(try #require(try Data.fetchOne(db, sql: "SELECT uuid FROM stratasync_ids WHERE state = 0")))
            }
        }
        Self.expectSame(
            try Self.dump(bulk, replacing: [try taken(bulk): "made here"]),
            try Self.dump(byChange, replacing: [try taken(byChange): "made here"]))
    }

    /// An answer by table as another server may send it: a null row is a deletion, a row of
    /// fewer values than columns holds only those (the others left out, as a change leaves out
    /// a column it does not send), one of more has them ignored, and a column named twice
    /// takes its last value, as the bulk insert reads it.
    @Test func anAnswerByTableReadsAsItsChanges() throws {
        let (a, b, c, d) = (UUID(), UUID(), UUID(), UUID())
        let answer = SyncPullResult(
            changes: [SyncChange(kind: .link, table: "Card_labels", link: ["cardID": a, "labelID": b])], cursor: 7, hasMore: false,
            objects: [
                SyncPullObjects(table: "Board", columns: ["name", "position"], ids: [a, b, c, d], rows: [["x", "1"], nil, ["y"], ["z", nil, "extra"]])
            ])
        let expected = [
            SyncChange(kind: .insert, table: "Board", id: a, values: ["name": "x", "position": "1"]),
            SyncChange(kind: .delete, table: "Board", id: b),
            SyncChange(kind: .insert, table: "Board", id: c, values: ["name": "y"]),
            SyncChange(kind: .insert, table: "Board", id: d, values: ["name": "z", "position": nil]),
            SyncChange(kind: .link, table: "Card_labels", link: ["cardID": a, "labelID": b]),
        ]
        #expect(PullBatch(answer).changes == expected)
        #expect(PullBatch(answer).count == 5)
        #expect(PullBatch(answer).cursor == 7)
        #expect(answer.allChanges == expected)
        let twice = SyncPullResult(
            changes: [], cursor: 0, hasMore: false,
            objects: [SyncPullObjects(table: "Board", columns: ["name", "name"], ids: [a], rows: [["first", "second"]])])
        #expect(twice.allChanges == [SyncChange(kind: .insert, table: "Board", id: a, values: ["name": "second"])])
        let folder = try TemporaryDirectory()
        let store = try Store(schema: StrataModel.schema, path: folder.path("store.sqlite"))
        defer { try? store.close() }
        let applier = PullApplier(tables: try SyncedTables(schema: StrataModel.schema, only: nil), options: Self.options(bulk: true), store: store)
        let prepared = try #require(applier.prepare(PullBatch(twice)))
        #expect(prepared == applier.prepare(twice.allChanges))
    }

    /// Another server (a relay) whose answers leave some columns out of the objects it sends:
    /// a column left out is left out of the row (it keeps its default) and of the base, in bulk
    /// as change by change.
    @Test func anotherServersObjectsWithoutSomeColumnsGoInBulkAsChangeByChange() async throws {
        let test = try await TestServer(), folder = try TemporaryDirectory()
        let messages = Messages()
        let stores = try ["bulk", "one"].map { try Store(schema: StrataModel.schema, path: folder.path("\($0).sqlite")) }
        let syncs = [
            try StoreSync(store: stores[0], server: LeavingOut(try test.server()), options: Self.recording(Self.options(bulk: true), messages)),
            try StoreSync(store: stores[1], server: LeavingOut(try test.server()), options: Self.options(bulk: false)),
        ]
        defer { Task { for sync in syncs { await sync.stop() }; for store in stores { try? store.close() } } }
        for sync in syncs { try await sync.push() }  // the hello makes the server's tables
        try await Self.seed(test)
        let reports = (try await syncs[0].sync(), try await syncs[1].sync())
        #expect(reports.0 == reports.1)
        #expect(reports.0.pulledChanges > 300)
        #expect(messages.all.contains { $0.contains("inserted in bulk") })
        #expect(!messages.all.contains { $0.contains("refused in bulk") })
        Self.expectSame(try Self.dump(stores[0]), try Self.dump(stores[1]))
        // What was left out took the column's default, and no object has a base (every column
        // holds its agreed value).
        for store in stores {
            let counts = try await store.read { db in
                [
                    try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM Card") ?? 0,
                    try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM Card WHERE link IS NOT NULL") ?? -1,
                    try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM Board WHERE position <> 0") ?? -1,
                    try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM stratasync_base") ?? -1,
                ]
            }
            #expect(counts[0] > 200)
            #expect(counts.dropFirst() == [0, 0, 0])
        }
    }
}

/// A relay that answers pulls without the cards' `link` and the boards' `position`.
struct LeavingOut: SyncServer {
    let server: PostgresSyncServer
    init(_ server: PostgresSyncServer) { self.server = server }
    func hello(_ hello: SyncHello) async throws -> SyncWelcome { try await server.hello(hello) }
    func push(_ push: SyncPush) async throws -> SyncPushResult { try await server.push(push) }
    func pull(_ request: SyncPullRequest) async throws -> SyncPullResult {
        var result = try await server.pull(request)
        for index in result.changes.indices where result.changes[index].kind == .insert {
            result.changes[index].values["link"] = nil
            result.changes[index].values["position"] = nil
        }
        return result
    }
    func changeSignals() async throws -> AsyncThrowingStream<Void, any Error> { try await server.changeSignals() }
}
