import Foundation
import StrataSyncFixture
@testable import StrataSync
import StrataTestSupport
import Testing

@Suite("Pushes apply once; the server's schema and other writers")
struct SyncProtocolTests {
    @Test func theSamePushTwiceLeavesTheServerAsOnePushWould() async throws {
        let test = try await TestServer(), folder = try TemporaryDirectory()
        let a = try Device(folder.path("a.sqlite"), test)
        defer { Task { await a.close() } }
        try await a.sync.sync()
        try await a.store.write { db in
            let board = try db.insert(Board(name: "Inbox"))
            for index in 0..<5 { _ = try db.insert(Card(title: "Card \(index)", points: index, boardID: board.id)) }
        }
        let push = try #require(try await a.sync.preparePush())
        let first = try await a.server.push(push)
        let logAfterFirst = try await test.psql("SELECT count(*) FROM strata_sync_log")
        let contentsAfterFirst = try await test.contents()
        // The same push again, and a push whose answer was lost: the device sends its outbox again.
        let second = try await a.server.push(push)
        #expect(second.isRepeat)
        #expect(second.refused == first.refused)
        try await a.sync.push()
        #expect(try await test.psql("SELECT count(*) FROM strata_sync_log") == logAfterFirst)
        #expect(try await test.contents() == contentsAfterFirst)
        #expect(contentsAfterFirst.objects["Card"]?.count == 5)
        try await expectConverged([a], test)
    }

    @Test func theServerSchemaIsMadeFromTheModel() async throws {
        let test = try await TestServer(), folder = try TemporaryDirectory()
        let a = try Device(folder.path("a.sqlite"), test)
        defer { Task { await a.close() } }
        try await a.sync.sync()
        let columns = try await test.psql("""
            SELECT column_name || ' ' || data_type || ' ' || is_nullable FROM information_schema.columns \
            WHERE table_name = 'Card' ORDER BY column_name
            """).split(separator: "\n").map(String.init)
        #expect(columns == [
            "blob bytea YES", "boardID uuid NO", "done boolean NO", "due timestamp with time zone YES",
            "estimate double precision NO", "id uuid NO", "link text YES", "points bigint NO", "price numeric YES",
            "small smallint NO", "stage text NO", "title text NO", "token uuid YES",
        ])
        let constraints = try await test.psql("""
            SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid IN ('"Card"'::regclass, '"Board"'::regclass, '"Card_labels"'::regclass) ORDER BY 1
            """)
        #expect(constraints.contains("FOREIGN KEY (\"boardID\") REFERENCES \"Board\"(id) ON DELETE CASCADE"))
        #expect(constraints.contains("UNIQUE (name)"))
        #expect(constraints.contains("char_length(title) <= 60"))
        #expect(constraints.contains("points >= '0'::bigint"))
        #expect(constraints.contains("FOREIGN KEY (\"labelID\") REFERENCES \"Label\"(id) ON DELETE CASCADE"))
        // The script a database administrator would apply is the same.
        let script = try PostgresSchema(schema: StrataModel.schema).sql
        #expect(script.contains("CREATE TABLE IF NOT EXISTS \"Card\""))
    }

    @Test func anotherServiceWritingTheTablesIsSeenByDevices() async throws {
        let test = try await TestServer(), folder = try TemporaryDirectory()
        let a = try Device(folder.path("a.sqlite"), test)
        defer { Task { await a.close() } }
        try await a.store.write { db in _ = try db.insert(Board(name: "Inbox")) }
        try await a.sync.sync()
        try await test.psql("""
            INSERT INTO "Card" (id, title, "boardID", due, estimate) \
            SELECT gen_random_uuid(), 'From a service', id, '2030-01-02 03:04:05.678+00', 2.5 FROM "Board";
            UPDATE "Board" SET position = 7
            """)
        try await a.sync.sync()
        let cards = try await a.store.fetchAll(Card.self)
        #expect(cards.map(\.title) == ["From a service"])
        #expect(cards.first?.estimate == 2.5)
        #expect(cards.first?.due == ISO8601DateFormatter.fractional.date(from: "2030-01-02T03:04:05.678Z"))
        #expect(try await a.store.fetchAll(Board.self).map(\.position) == [7])
        try await test.psql("DELETE FROM \"Board\"")  // cascades on the server, and in the store
        try await a.sync.sync()
        #expect(try await a.store.fetchCount(Card.self) == 0)
        try await expectConverged([a], test)
    }

    @Test func aLiveControllerReceivesPulledChangesAsBatches() async throws {
        let test = try await TestServer(), folder = try TemporaryDirectory()
        let a = try Device(folder.path("a.sqlite"), test), b = try Device(folder.path("b.sqlite"), test)
        defer { Task { await a.close(); await b.close() } }
        try await a.store.write { db in _ = try db.insert(Board(name: "Inbox")) }
        try await settle([a, b])
        let controller = try ResultsController(store: b.store, request: Card.Fetches.byBoard)
        var updates = controller.updates.makeAsyncIterator()
        _ = try await updates.next()  // the first delivery: a reload
        await b.sync.start()
        try await a.store.write { db in
            let board = try db.fetchAll(Board.self)[0]
            _ = try db.insert(Card(title: "Live", boardID: board.id))
        }
        try await a.sync.sync()
        // B pulls on the server's notification (its timer is 30 s away).
        let update = try await updates.next()
        guard case .batch(let batch, let snapshot) = update else {
            Issue.record("expected a batch, got \(String(describing: update))")
            return
        }
        #expect(batch.itemInserts.count == 1)
        #expect(snapshot.items.map(\.title) == ["Live"])
        #expect(try await b.store.fetchAll(Card.Fetches.byBoard).map(\.title) == ["Live"])
    }
}

extension ISO8601DateFormatter {
    static var fractional: ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }
}
