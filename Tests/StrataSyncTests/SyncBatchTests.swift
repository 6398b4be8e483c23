import Foundation
import StrataSyncFixture
@testable import StrataSync
import StrataTestSupport
import Testing

/// Many changes at once: a pull applied in one savepoint, a push's runs of inserts or updates
/// applied by one statement each, and the bases written and read by hand.
@Suite("Changes in bulk")
struct SyncBatchTests {
    @Test func basesRoundTripAndReadWhatJSONEncoderWrote() throws {
        let samples: [[String: String?]] = [
            [:],
            ["a": "plain", "b": nil, "c": ""],
            ["quote": "say \"hi\"", "slash": "a/b\\c", "controls": "\u{0}\u{1}\u{8}\u{9}\u{A}\u{C}\u{D}\u{1F}", "unicode": "é \u{2028} 😀"],
            ["a10": "1", "a9": "2", "B": "3", "_": nil],
        ]
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        for values in samples {
            let text = SyncJSON.encode(values)
            #expect(SyncJSON.decode(text) == values)
            // Stores written before the hand-written encoder hold JSONEncoder's output.
            let foundation = String(decoding: try encoder.encode(values), as: UTF8.self)
            #expect(text == foundation)
            #expect(SyncJSON.parseFlatObject(foundation) == values)
        }
        #expect(SyncJSON.parseFlatObject(" { \"a\" : \"\\u00e9\\ud83d\\ude00\" , \"b\" : null } ") == ["a": "é😀", "b": nil])
        #expect(SyncJSON.parseFlatObject("{\"a\": 1}") == nil)
        #expect(SyncJSON.decode("{\"a\": null, \"b\": \"x\"}") == ["a": nil, "b": "x"])
        #expect(SyncJSON.decode(nil) == nil)
    }

    @Test func aPushOfManyInsertsAndUpdatesKeepsEveryValueAndRefusesOnlyWhatItMust() async throws {
        let test = try await TestServer(), folder = try TemporaryDirectory()
        let a = try Device(folder.path("a.sqlite"), test), b = try Device(folder.path("b.sqlite"), test)
        defer { Task { await a.close(); await b.close() } }
        let titles = ["plain", "quote \" and \\ backslash", "line\nbreak\ttab", "unicode é 😀", "slash / and {json}"]
        try await a.store.write { db in
            let board = try db.insert(Board(name: "Inbox"))
            for (index, title) in titles.enumerated() {
                _ = try db.insert(Card(
                    title: title, stage: .doing, points: index, estimate: Double(index) + 0.5, small: Int16(-index), done: index % 2 == 0,
                    due: index == 0 ? nil : Date(timeIntervalSince1970: 1_790_000_000.125 + Double(index)),
                    token: index == 1 ? nil : UUID(), blob: index == 2 ? nil : Data([0, UInt8(index), 255]),
                    price: index == 3 ? nil : Decimal(string: "1\(index).50"), link: URL(string: "https://example.com/\(index)?a=b"),
                    boardID: board.id))
            }
        }
        try await settle([a, b])
        try await expectConverged([a, b], test)
        #expect(Set(try await b.store.fetchAll(Card.self).map(\.title)) == Set(titles))

        // The server deletes one card; A then updates every card's title and points: one run of
        // updates, of which the deleted card's is refused and the others applied.
        let doomed = try #require(try await a.store.fetchAll(Card.self).first { $0.title == "plain" })
        let doomedID = try #require(try a.sync.syncID(of: "Card", id: doomed.id.rawValue))
        try await test.psql("DELETE FROM \"Card\" WHERE id = '\(doomedID.uuidString.lowercased())'")
        try await a.store.write { db in
            for var card in try db.fetchAll(Card.self) {
                card.title += " (edited)"
                card.points += 10
                _ = try db.update(card)
            }
        }
        let report = try await a.sync.push()
        #expect(report.pushedChanges == titles.count)
        #expect(report.changesRefusedByServer == 1)
        #expect(try a.sync.conflicts().map(\.object) == [doomedID])
        try await settle([a, b])
        try await expectConverged([a, b], test)
        let edited = try await b.store.fetchAll(Card.self)
        #expect(edited.count == titles.count - 1)
        #expect(edited.allSatisfy { $0.title.hasSuffix(" (edited)") && $0.points >= 10 })
    }

    @Test func aRunOfInsertsThatTheServerRefusesFallsBackToOneByOne() async throws {
        let test = try await TestServer(), folder = try TemporaryDirectory()
        let a = try Device(folder.path("a.sqlite"), test), b = try Device(folder.path("b.sqlite"), test)
        defer { Task { await a.close(); await b.close() } }
        // B takes the name "Two" first; A's run of three boards then breaks the unique name.
        try await b.store.write { db in _ = try db.insert(Board(name: "Two")) }
        try await b.sync.sync()
        try await a.store.write { db in
            for name in ["One", "Two", "Three"] { _ = try db.insert(Board(name: name)) }
        }
        let report = try await a.sync.push()
        #expect(report.pushedChanges == 3)
        #expect(report.changesRefusedByServer == 1)
        try await settle([a, b])
        try await expectConverged([a, b], test)
        #expect(Set(try await a.store.fetchAll(Board.self).map(\.name)) == ["One", "Two", "Three"])
        #expect(try await a.store.fetchCount(Board.self) == 3)
    }

    @Test func aPullThatARuleHereRefusesStillAppliesTheRest() async throws {
        let test = try await TestServer(), folder = try TemporaryDirectory()
        let a = try Device(folder.path("a.sqlite"), test)
        defer { Task { await a.close() } }
        try await a.sync.sync()
        // A creates "Taken" and does not push it; the server gets boards from another service,
        // one of them named "Taken": the pull applies all but that one, and records it.
        try await a.store.write { db in _ = try db.insert(Board(name: "Taken")) }
        try await test.psql("""
            INSERT INTO "Board" (id, name, position) SELECT gen_random_uuid(), 'Board ' || n, n FROM generate_series(1, 50) n;
            INSERT INTO "Board" (id, name, position) VALUES (gen_random_uuid(), 'Taken', 99)
            """)
        let report = try await a.sync.pull()
        #expect(report.pulledChanges == 51)
        #expect(report.conflictsWhilePulling == 1)
        #expect(try await a.store.fetchCount(Board.self) == 51)
        #expect(try a.sync.conflicts().map(\.kind) == [.notAppliedHere])
    }
}

/// The sync's own readers and writers of ids and hexadecimal, which a pull runs per value,
/// agree with Foundation's; and the identity trigger of earlier versions is replaced.
@Suite("Wire text by hand")
struct SyncWireTextTests {
    @Test func idsAndHexadecimalReadAndWriteAsFoundationDoes() {
        for _ in 0..<200 {
            let id = UUID()
            #expect(SyncValue.text(of: id) == id.uuidString.lowercased())
            #expect(SyncValue.uuid(id.uuidString) == id)
            #expect(SyncValue.uuid(id.uuidString.lowercased()) == id)
        }
        let samples = [
            "", "not a uuid", "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "e621e1f8-c36c-495a-93fc-0c247a3e6e5g",
            "e621e1f8c36c-495a-93fc-0c247a3e6e5ff", "e621e1f8-c36c-495a-93fc-0c247a3e6e5", "{e621e1f8-c36c-495a-93fc-0c247a3e6e5f}",
            "e621e1f8-c36c-495a-93fc-0c247a3e6e5f ", "é621e1f8-c36c-495a-93fc-0c247a3e6e5f",
        ]
        for text in samples { #expect(SyncValue.uuid(text) == UUID(uuidString: text), "\(text)") }
        #expect(SyncValue.data(hex: "00ff10Ab") == Data([0, 255, 16, 171]))
        #expect(SyncValue.data(hex: "\\x0a") == Data([10]))
        #expect(SyncValue.data(hex: "") == Data())
        #expect(SyncValue.data(hex: "abc") == nil)
        #expect(SyncValue.data(hex: "zz") == nil)
    }

    /// The store at `path` and a sync of it with a server it never connects to.
    static func openUnconnected(_ path: String) throws -> (Store, StoreSync) {
        let configuration = PostgresConnection.Configuration(
            host: "localhost", username: "nobody", password: nil, database: nil, tls: .disable)
        let store = try Store(schema: StrataModel.schema, path: path)
        return (store, try StoreSync(store: store, server: try PostgresSyncServer(configuration: configuration, schema: StrataModel.schema)))
    }

    /// A sync trigger whose text is another version's (an earlier identity trigger, say) is
    /// replaced by this version's; this version's is kept as it is (not dropped and made
    /// again at every start); and rows get one sync id each, none when the sync gave them
    /// theirs first (as a pull does).
    @Test func aTriggerOfAnotherVersionIsReplacedAndThisOneKept() async throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("store.sqlite")
        func open() throws -> (Store, StoreSync) { try Self.openUnconnected(path) }
        let board = try #require(try SyncedTables(schema: StrataModel.schema, only: nil).entity(named: "Board"))
        let numbers: [String: Int64] = try {
            let (store, _) = try open()
            defer { try? store.close() }
            return try store.read { db in try LocalSyncState.tableNumbers(db) }
        }()
        let current = LocalSyncState.storedSQL(of: LocalSyncState.triggers(for: board, numbers: numbers)[0])
        #expect(current.hasPrefix("CREATE TRIGGER \"stratasync_insert_Board\" AFTER INSERT ON \"Board\" BEGIN SELECT RAISE"))
        let trigger = "SELECT rowid, sql FROM sqlite_master WHERE type = 'trigger' AND name = 'stratasync_insert_Board'"
        do {
            let (store, _) = try open()
            #expect(try await store.read { db in try Row.fetchOne(db, sql: trigger)?["sql"] as String? } == current)
            try await store.write { db in
                // Another version's: a random id for every row, dropped by the `OR IGNORE` when
                // the row had one.
                try db.execute(sql: "DROP TRIGGER \"stratasync_insert_Board\"")
                try db.execute(sql: """
                    CREATE TRIGGER "stratasync_insert_Board" AFTER INSERT ON "Board" BEGIN \
                    INSERT OR IGNORE INTO stratasync_ids (k, uuid) \
                    VALUES (NEW."id" * 1024 + (SELECT n FROM stratasync_tables WHERE tbl = 'Board'), randomblob(16)); END
                    """)
                _ = try db.insert(Board(name: "Before"))
            }
            try store.close()
        }
        let first: Row? = try {
            let (store, _) = try open()
            defer { try? store.close() }
            return try store.read { db in try Row.fetchOne(db, sql: trigger) }
        }()
        #expect(first?["sql"] == current)
        // Opened again: this version's trigger is left as it is (not dropped and made again).
        let (store, sync) = try open()
        defer { try? store.close() }
        let again = try store.read { db in try Row.fetchOne(db, sql: trigger) }
        #expect(again?["sql"] == current)
        #expect(again?["rowid"] as Int64? == first?["rowid"] as Int64?)
        // A row written here gets one sync id; a row whose id the sync wrote first (as a pull
        // does) keeps that one and gets no other.
        let made = try await store.write { db in try db.insert(Board(name: "After")) }
        #expect(try sync.syncID(of: "Board", id: made.id.rawValue) != nil)
        let given = try #require(UUID(uuidString: "00000000-0000-4000-8000-0000000000b1"))
        try await store.write { db in
            let key = (try Int64.fetchOne(db, sql: "SELECT MAX(id) FROM Board") ?? 0) + 1
            try db.execute(
                sql: "INSERT INTO stratasync_ids (k, uuid, state) VALUES (?, ?, 1)",
                arguments: [LocalSyncState.packedKey(key, try #require(numbers["Board"])), LocalSyncState.blob(given)])
            try db.execute(sql: "INSERT INTO Board (id, name, position) VALUES (?, 'Pulled', 0)", arguments: [key])
        }
        let counts = try await store.read { db in
            try Int.fetchAll(db, sql: """
                SELECT COUNT(*) FROM stratasync_ids WHERE k & 1023 = (SELECT n FROM stratasync_tables WHERE tbl = 'Board') \
                GROUP BY k >> 10 ORDER BY k >> 10
                """)
        }
        #expect(counts == [1, 1, 1])
        let pulled = try await store.read { db in try Int64.fetchOne(db, sql: "SELECT id FROM Board WHERE name = 'Pulled'") }
        #expect(try sync.syncID(of: "Board", id: try #require(pulled)) == given)
    }
}
