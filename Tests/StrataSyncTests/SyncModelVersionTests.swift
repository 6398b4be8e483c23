import Foundation
import StrataSQL
import StrataSyncFixture
import StrataTestSupport
import Testing

@Suite("Devices on other versions of the model")
struct SyncModelVersionTests {
    /// The test model with `Card.points` a `String`: a column of another type than the server's.
    static var modelWithTextPoints: SchemaDescriptor {
        var other = StrataModel.schema
        let card = other.entities.firstIndex { $0.name == "Card" }!
        let points = other.entities[card].attributes.firstIndex { $0.name == "points" }!
        other.entities[card].attributes[points].type = .string
        other.entities[card].attributes[points].defaultValue = nil
        other.entities[card].attributes[points].rules = ValueRules()
        return other
    }

    /// The fixture model with an optional `Card.color` (an additive change).
    static var newer: SchemaDescriptor {
        var schema = StrataModel.schema
        let card = schema.entities.firstIndex { $0.name == "Card" }!
        schema.entities[card].attributes.append(AttributeDescriptor(name: "color", type: .string, isOptional: true))
        return schema
    }

    @Test func anOlderAndANewerDeviceInteroperateAfterAnAdditiveChange() async throws {
        let test = try await TestServer(), folder = try TemporaryDirectory()
        let old = try Device(folder.path("old.sqlite"), test)
        defer { Task { await old.close() } }
        try await old.store.write { db in
            let board = try db.insert(Board(name: "Inbox"))
            _ = try db.insert(Card(title: "From the old model", boardID: board.id))
        }
        try await old.sync.sync()
        // The newer device extends the server's table, then writes the new column.
        let new = try Device(folder.path("new.sqlite"), test, schema: Self.newer)
        defer { Task { await new.close() } }
        try await new.sync.sync()
        #expect(try await test.psql("SELECT count(*) FROM information_schema.columns WHERE table_name = 'Card' AND column_name = 'color'") == "1\n")
        try await new.store.write { db in
            try db.execute(sql: "UPDATE Card SET color = 'red', title = 'Both'")
        }
        try await new.sync.sync()
        try await old.sync.sync()
        #expect(try await old.store.fetchAll(Card.self).map(\.title) == ["Both"])
        // The old device's edit keeps the column it does not know.
        try await old.store.write { db in try db.execute(sql: "UPDATE Card SET points = 5") }
        try await old.sync.sync()
        try await new.sync.sync()
        #expect(try await test.psql("SELECT color || ' ' || points FROM \"Card\"") == "red 5\n")
        #expect(try await new.store.read { db in try String.fetchOne(db, sql: "SELECT color || ' ' || points FROM Card") } == "red 5")
    }

    @Test func aColumnOfAnotherTypeIsRefusedNamingBothVersions() async throws {
        let test = try await TestServer(), folder = try TemporaryDirectory()
        let a = try Device(folder.path("a.sqlite"), test)
        defer { Task { await a.close() } }
        try await a.sync.sync()
        let other = Self.modelWithTextPoints
        let b = try Device(folder.path("b.sqlite"), test, schema: other)
        defer { Task { await b.close() } }
        let error = await #expect(throws: SyncModelError.self) { try await b.sync.sync() }
        let text = "\(error.map { "\($0)" } ?? "")"
        let expected = try PostgresSchema(schema: other).version.fingerprint
        #expect(text.contains("Card.points: bigint on the server, text here"))
        #expect(text.contains(expected))
        #expect(text.contains(try PostgresSchema(schema: StrataModel.schema).version.fingerprint))
    }

    @Test func tablesMadeFromTheScriptNameTheirModel() async throws {
        let test = try await TestServer(), folder = try TemporaryDirectory()
        try await test.psql(try PostgresSchema(schema: StrataModel.schema).sql)
        #expect(try await test.psql("SELECT value FROM strata_sync_meta WHERE key = 'model'").contains(
            try PostgresSchema(schema: StrataModel.schema).version.fingerprint))
        let other = Self.modelWithTextPoints
        let b = try Device(folder.path("b.sqlite"), test, schema: other, policy: .requireExisting)
        defer { Task { await b.close() } }
        let error = await #expect(throws: SyncModelError.self) { try await b.sync.sync() }
        let text = "\(error.map { "\($0)" } ?? "")"
        #expect(!text.contains("(unknown)"), "\(text)")
        #expect(text.contains("the server's model \(try PostgresSchema(schema: StrataModel.schema).version)"), "\(text)")
    }

    /// A server whose tables an earlier version made lacks the lock trigger of each synced
    /// table and the position triggers of ordered lists: a device that may change the schema
    /// adds them at its hello, and one that may not says which tables lack them.
    @Test func aServerMadeByAnEarlierVersionGetsTheTriggersOfThisOne() async throws {
        let test = try await TestServer(), folder = try TemporaryDirectory()
        try await test.psql(try PostgresSchema(schema: StrataModel.schema).sql)
        let triggers = """
            SELECT c.relname || ' ' || t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid \
            WHERE t.tgname LIKE 'strata_sync_lock' OR t.tgname LIKE 'strata_sync_position_%' OR t.tgname LIKE 'strata_sync_ties_%' \
            ORDER BY 1
            """
        let made = try await test.psql(triggers)
        #expect(made.contains("Track \(PostgreSQLDDL.lockTriggerName)"))
        #expect(made.contains("Track strata_sync_position_"))
        #expect(made.contains("Track strata_sync_ties_"))
        // As an earlier version left it.
        for line in made.split(separator: "\n") {
            let words = line.split(separator: " ")
            guard words.count == 2 else { continue }
            try await test.psql(#"DROP TRIGGER "\#(words[1])" ON "\#(words[0])""#)
        }
        #expect(try await test.psql(triggers).trimmingCharacters(in: .whitespacesAndNewlines) == "")

        let strict = try Device(folder.path("strict.sqlite"), test, policy: .requireExisting)
        defer { Task { await strict.close() } }
        let error = await #expect(throws: SyncModelError.self) { try await strict.sync.sync() }
        let text = "\(error.map { "\($0)" } ?? "")"
        #expect(text.contains("the table Track lacks the sync's triggers of this version"), "\(text)")
        #expect(text.contains("the table Board lacks the sync's triggers of this version"), "\(text)")

        let device = try Device(folder.path("a.sqlite"), test)
        defer { Task { await device.close() } }
        try await device.sync.sync()
        #expect(try await test.psql(triggers) == made)
        // And they work: a track appended without a position on the server goes last.
        try await device.store.write { db in
            let album = try db.insert(Album(title: "R", slug: "r"))
            _ = try db.insert(Track(title: "t1", albumID: album.id))
        }
        try await device.sync.sync()
        try await test.psql(#"INSERT INTO "Track" (id, title, "albumID") SELECT gen_random_uuid(), 't2', id FROM "Album""#)
        #expect(try await test.psql(#"SELECT string_agg(title, ',' ORDER BY "albumPosition") FROM "Track""#).contains("t1,t2"))
        try await strict.sync.sync()
    }

    @Test func aServerThatMayNotBeChangedNeedsItsTables() async throws {
        let test = try await TestServer(), folder = try TemporaryDirectory()
        let store = try Store(schema: StrataModel.schema, path: folder.path("a.sqlite"))
        let server = try test.server(policy: .requireExisting)
        let sync = try StoreSync(store: store, server: server)
        await #expect(throws: SyncModelError.serverHasNoTables) { try await sync.sync() }
        // Applied by whoever manages the database, from the script.
        try await test.psql(try PostgresSchema(schema: StrataModel.schema).sql)
        try await sync.sync()
        await server.close()
        try store.close()
    }
}
