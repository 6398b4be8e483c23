import Foundation
import StrataSQL
import StrataSyncFixture
import StrataTestSupport
import Testing

/// Ordered lists, references whose destinations a device refused, and the sync's own state:
/// what a device writes as the sync's author either reaches the server or is never written,
/// so that every store ends equal to the server's tables (each test was a report of stores
/// that stayed different for good).
@Suite("Ordered lists and missing destinations end the same everywhere")
struct SyncOrderedListTests {
    /// Devices A and B, each with a store file of its own in `folder`.
    func twoDevices(_ test: TestServer, _ folder: TemporaryDirectory) throws -> (Device, Device) {
        (try Device(folder.path("a.sqlite"), test), try Device(folder.path("b.sqlite"), test))
    }

    /// The titles of the album's tracks in the order every list shows them: (position, id).
    func titles(_ device: Device, album slug: String) async throws -> [String] {
        try await device.store.read { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT t.title FROM Track t JOIN Album a ON a.id = t.albumID WHERE a.slug = ? \
                    ORDER BY t.albumPosition, t.id
                    """,
                arguments: [slug])
        }
    }

    /// The album slug and position of the track called `title` ("-" for none).
    func place(_ device: Device, _ title: String) async throws -> String {
        try await device.store.read { db in
            try String.fetchOne(
                db,
                sql: """
                    SELECT COALESCE(a.slug, '-') || ' ' || COALESCE(CAST(t.albumPosition AS TEXT), '-') \
                    FROM Track t LEFT JOIN Album a ON a.id = t.albumID WHERE t.title = ?
                    """,
                arguments: [title]) ?? "?"
        }
    }

    /// The server's tracks that share an album and a position with another.
    func serverTies(_ test: TestServer) async throws -> String {
        try await test.psql("""
            SELECT string_agg(title, ',' ORDER BY title) FROM "Track" WHERE "albumID" IS NOT NULL \
            GROUP BY "albumID", "albumPosition" HAVING count(*) > 1
            """)
    }

    @Test func tracksAppendedOnTwoDevicesOfflineAreInOneOrderOnEveryDevice() async throws {
        let (test, folder) = (try await TestServer(), try TemporaryDirectory())
        let (a, b) = try twoDevices(test, folder)
        defer { Task { await a.close(); await b.close() } }
        try await a.store.write { db in
            let album = try db.insert(Album(title: "R1", slug: "r1"))
            _ = try db.insert(Track(title: "t1", albumID: album.id))
        }
        try await a.sync.sync()
        try await b.sync.sync()
        // Offline, each appends a track: both take the position after t1's.
        for (device, title) in [(a, "from-A"), (b, "from-B")] {
            try await device.store.write { db in
                let album = try db.fetchAll(Album.self)[0]
                _ = try db.insert(Track(title: title, albumID: album.id))
            }
        }
        #expect(try await place(a, "from-A") == (try await place(b, "from-B")))
        try await a.sync.sync()
        try await b.sync.sync()
        try await a.sync.sync()
        // The later to reach the server goes second, on every device.
        #expect(try await titles(a, album: "r1") == ["t1", "from-A", "from-B"])
        #expect(try await titles(b, album: "r1") == ["t1", "from-A", "from-B"])
        #expect(try await serverTies(test) == "")
        try await expectConverged([a, b], test)
    }

    @Test func aRemovalFromAListRacingAMoveWithinItEndsWithoutAPosition() async throws {
        let (test, folder) = (try await TestServer(), try TemporaryDirectory())
        let (a, b) = try twoDevices(test, folder)
        defer { Task { await a.close(); await b.close() } }
        try await a.store.write { db in
            let album = try db.insert(Album(title: "R2", slug: "r2"))
            _ = try db.insert(Track(title: "x", albumID: album.id))
            _ = try db.insert(Track(title: "y", albumID: album.id))
        }
        try await settle([a, b])
        try await a.store.write { db in try db.execute(sql: "UPDATE Track SET albumID = NULL WHERE title = 'y'") }
        try await b.store.write { db in try db.execute(sql: "UPDATE Track SET albumPosition = 32768 WHERE title = 'y'") }  // dragged first
        #expect(try await place(a, "y") == "- -")  // a child whose parent becomes nil loses its position
        for device in [a, b, a, b] { try await device.sync.sync() }
        #expect(try await place(a, "y") == "- -")
        #expect(try await place(b, "y") == "- -")
        #expect(try await test.psql(#"SELECT "albumID" IS NULL, "albumPosition" IS NULL FROM "Track" WHERE title = 'y'"#) == "t|t\n")
        try await expectConverged([a, b], test)
    }

    @Test func aPositionAnotherServiceLeavesOutIsTheServersOnEveryDevice() async throws {
        let (test, folder) = (try await TestServer(), try TemporaryDirectory())
        let (a, b) = try twoDevices(test, folder)
        defer { Task { await a.close(); await b.close() } }
        try await a.store.write { db in
            let one = try db.insert(Album(title: "One", slug: "one"))
            _ = try db.insert(Album(title: "Two", slug: "two"))
            _ = try db.insert(Track(title: "first", albumID: one.id))
        }
        try await settle([a, b])
        // Another service inserts a track without a position, and moves one to another album
        // without a position.
        try await test.psql("""
            INSERT INTO "Track" (id, title, "albumID") SELECT gen_random_uuid(), 'by SQL', id FROM "Album" WHERE slug = 'one';
            INSERT INTO "Track" (id, title, "albumID", "albumPosition") SELECT gen_random_uuid(), 'loose', NULL, 5 FROM "Album" WHERE slug = 'one';
            """)
        #expect(try await test.psql(#"SELECT "albumPosition" FROM "Track" WHERE title = 'by SQL'"#) == "131072\n")
        #expect(try await test.psql(#"SELECT "albumPosition" IS NULL FROM "Track" WHERE title = 'loose'"#) == "t\n")
        try await settle([a, b])
        try await test.psql(#"UPDATE "Track" SET "albumID" = (SELECT id FROM "Album" WHERE slug = 'two') WHERE title = 'first'"#)
        try await settle([a, b])
        #expect(try await titles(a, album: "one") == ["by SQL"])
        #expect(try await place(b, "first") == "two 65536")
        try await expectConverged([a, b], test)
    }

    @Test func aMoveToAnotherParentAtThePositionTheRowHadHereKeepsTheServersPosition() async throws {
        let (test, folder) = (try await TestServer(), try TemporaryDirectory())
        let (a, b) = try twoDevices(test, folder)
        defer { Task { await a.close(); await b.close() } }
        try await a.store.write { db in
            let one = try db.insert(Album(title: "One", slug: "one"))
            let two = try db.insert(Album(title: "Two", slug: "two"))
            _ = try db.insert(Track(title: "z", albumID: one.id))
            _ = try db.insert(Track(title: "b", albumID: two.id))  // 65536
            _ = try db.insert(Track(title: "c", albumID: two.id))  // 131072
        }
        try await a.store.write { db in try db.execute(sql: "UPDATE Track SET albumPosition = 196608 WHERE title = 'z'") }
        try await settle([a, b])
        // Another service moves b within album two (A does not pull it yet), then into album
        // one before z, at 65536: the position A's store still has for b. To A's store, the
        // pull reads as a parent changed with its position unchanged, which its triggers
        // answer by placing b last; the server's position must win.
        try await test.psql(#"UPDATE "Track" SET "albumPosition" = 98304 WHERE title = 'b'"#)
        try await test.psql(#"UPDATE "Track" SET "albumID" = (SELECT id FROM "Album" WHERE slug = 'one'), "albumPosition" = 65536 WHERE title = 'b'"#)
        #expect(try await test.psql(#"SELECT "albumPosition" FROM "Track" WHERE title = 'b'"#) == "65536\n")
        try await a.sync.sync()
        #expect(try await titles(a, album: "one") == ["b", "z"])
        #expect(try await place(a, "b") == "one 65536")
        try await settle([a, b])
        try await expectConverged([a, b], test)
    }

    @Test func aUniqueCollisionMetOnAPullLeavesNoReferenceBrokenAndNothingWipedSilently() async throws {
        let (test, folder) = (try await TestServer(), try TemporaryDirectory())
        let (a, b) = try twoDevices(test, folder)
        defer { Task { await a.close(); await b.close() } }
        try await settle([a, b])
        try await a.store.write { db in _ = try db.insert(Album(title: "Mine", slug: "dup")) }  // not pushed yet
        try await b.store.write { db in
            let album = try db.insert(Album(title: "Theirs", slug: "dup"))
            _ = try db.insert(Track(title: "t1", albumID: album.id))
            _ = try db.insert(Track(title: "t2", albumID: album.id))
        }
        try await b.sync.sync()
        try await a.sync.pull()
        let pulled = try a.sync.conflicts()
        #expect(pulled.contains { $0.kind == .notAppliedHere && $0.table == "Album" })
        // The tracks came without their album, and that is recorded too.
        #expect(pulled.filter { $0.kind == .notAppliedHere && $0.table == "Track" }.count == 2)
        try await a.sync.sync()  // A's album is refused; the pull after it reads the server again
        #expect(try await place(a, "t1") == "dup 65536")
        #expect(try await place(a, "t2") == "dup 131072")
        try await a.store.write { db in try db.execute(sql: "UPDATE Track SET title = 't1 retitled' WHERE title = 't1'") }
        try await a.sync.sync()
        #expect(try await test.psql(#"SELECT a.title FROM "Track" t JOIN "Album" a ON a.id = t."albumID" WHERE t.title = 't1 retitled'"#) == "Theirs\n")
        try await settle([a, b])
        #expect(try await place(b, "t1 retitled") == "dup 65536")
        try await expectConverged([a, b], test)
    }

    @Test func theServerHandsOutPositionsAsTheStoreDoes() async throws {
        let store = try Store.inMemory(schema: StrataModel.schema)
        let first = try await store.write { db in
            let album = try db.insert(Album(title: "R", slug: "r"))
            _ = try db.insert(Track(title: "t", albumID: album.id))
            return try Int64.fetchOne(db, sql: "SELECT albumPosition FROM Track")
        }
        #expect(first == PostgreSQLDDL.positionGap)
        #expect(try PostgresSchema(schema: StrataModel.schema).sql.contains("strata_sync_ties_albumID"))
    }
}
