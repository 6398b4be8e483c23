import Foundation
import GRDB
import Strata
import StrataSQL
@testable import StrataSync
import StrataSyncFixture
import StrataTestSupport
import Testing

/// The sync's state in the store file (format 2): a 16-byte id per object, a base only for
/// the columns changed here since the last agreement, and the in-place migration of a store
/// of the first format (text ids, a whole JSON base per object).
@Suite("The sync's state in the store file")
struct SyncStateFormatTests {
    /// The rows of `stratasync_base`, as "table column" (sorted).
    static func bases(_ device: Device) throws -> [String] {
        try device.store.read { db in
            try String.fetchAll(db, sql: "SELECT tbl || ' ' || col FROM stratasync_base ORDER BY tbl, col")
        }
    }

    /// Every sync id is 16 bytes, and every object is agreed with the server.
    static func idsAreBytesAndAgreed(_ device: Device) throws -> Bool {
        try device.store.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM stratasync_ids WHERE typeof(uuid) <> 'blob' OR length(uuid) <> 16 OR state <> 1") == 0
                && Int.fetchOne(db, sql: "SELECT COUNT(*) FROM stratasync_ids") ?? 0 > 0
        }
    }

    @Test func anObjectAgreedWithTheServerKeepsItsIdAndNoBase() async throws {
        let (test, folder) = (try await TestServer(), try TemporaryDirectory())
        let a = try Device(folder.path("a.sqlite"), test), b = try Device(folder.path("b.sqlite"), test)
        defer { Task { await a.close(); await b.close() } }
        try await a.store.write { db in
            for index in 0..<3 {
                let board = try db.insert(Board(name: "B\(index)"))
                let card = try db.insert(Card(title: "C\(index)", boardID: board.id))
                let label = try db.insert(Label(name: "L\(index)"))
                try db.link(card.id, Card.labels, label.id)
            }
        }
        try await a.sync.sync()
        try await b.sync.sync()
        for device in [a, b] {
            #expect(try Self.idsAreBytesAndAgreed(device))
            #expect(try Self.bases(device) == [])
        }
        #expect(try await b.store.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM stratasync_links") } == 3)
        try await expectConverged([a, b], test)
    }

    /// A local edit keeps the agreed value of exactly the columns it changed; what a pull
    /// writes keeps none; a push clears them; a column changed back is not pushed.
    @Test func aLocalEditKeepsTheAgreedValueOfExactlyTheColumnsItChanged() async throws {
        let (test, folder) = (try await TestServer(), try TemporaryDirectory())
        let a = try Device(folder.path("a.sqlite"), test), b = try Device(folder.path("b.sqlite"), test)
        defer { Task { await a.close(); await b.close() } }
        let card = try await a.store.write { db in
            let board = try db.insert(Board(name: "Board"))
            return try db.insert(Card(title: "First", points: 1, boardID: board.id))
        }
        try await a.sync.sync()
        try await b.sync.sync()
        let here = try #require(try await b.store.read { db in try db.fetchAll(Card.self).first })
        // B edits the title and the points, and the stage there and back.
        try await b.store.write { db in
            var edited = here
            edited.title = "From B"
            edited.points = 5
            edited.stage = .doing
            try db.update(edited)
            edited.stage = .todo
            try db.update(edited)
        }
        #expect(try Self.bases(b) == ["Card points", "Card stage", "Card title"])
        let agreed = try await b.store.read { db in
            try Row.fetchAll(db, sql: "SELECT col, old FROM stratasync_base ORDER BY col").map { "\($0["col"] as String)=\($0["old"] as DatabaseValue)" }
        }
        #expect(agreed == ["points=1", "stage=\"todo\"", "title=\"First\""])
        // A changes the estimate meanwhile; B's pull writes it, and keeps no base for it.
        try await a.store.write { db in
            var edited = try #require(try db.fetchOne(Card.self, id: card.id))
            edited.estimate = 2.5
            try db.update(edited)
        }
        try await a.sync.sync()
        try await b.sync.pull()
        // (The stage, changed back, now holds the agreed value: its base goes too.)
        #expect(try Self.bases(b) == ["Card points", "Card title"])
        let pulled = try #require(try await b.store.read { db in try db.fetchAll(Card.self).first })
        #expect(pulled.estimate == 2.5 && pulled.title == "From B" && pulled.points == 5)
        // The push sends the title and the points (the stage is as agreed), and the bases go.
        let report = try await b.sync.push()
        #expect(report.pushedChanges == 1)
        #expect(try Self.bases(b) == [])
        let server = try await test.psql(#"SELECT title || ' ' || points || ' ' || stage || ' ' || estimate FROM "Card""#).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(server == "From B 5 todo 2.5", "the server has \(server)")
        try await a.sync.sync()
        try await expectConverged([a, b], test)
    }

    /// The fixture model with `Card.color`, optional, "grey" by default: a store of the
    /// fixture model opened with it is migrated by the store itself, which rebuilds `Card`
    /// (create, copy, drop, rename): the sync's triggers on it are gone.
    static var withColor: SchemaDescriptor {
        var schema = StrataModel.schema
        let card = schema.entities.firstIndex { $0.name == "Card" }!
        schema.entities[card].attributes.append(
            AttributeDescriptor(name: "color", type: .string, isOptional: true, defaultValue: .value("grey".databaseValue)))
        return schema
    }

    /// The two cases the sync's triggers cannot see, met as an app meets them: a new version
    /// of the app migrates its store (a column added, so the store rebuilds the table and the
    /// sync's triggers on it go) and writes before its sync starts. As Docs/Decisions.md says
    /// ("The base is sparse"): the column the store gained has a base of nil in every agreed
    /// object, so its values here reach the server; the rebuilt table, which held agreed
    /// objects, is read again from the server's start, whose state wins for a change of an
    /// old column that no trigger saw; and the store keeps syncing.
    @Test func aStoreMigratedByANewVersionOfTheAppPushesItsNewColumnAndReadsTheRebuiltTableAgain() async throws {
        let (test, folder) = (try await TestServer(), try TemporaryDirectory())
        let path = folder.path("a.sqlite")
        let old = try Device(path, test), b = try Device(folder.path("b.sqlite"), test)
        defer { Task { await b.close() } }
        let ids = try await old.store.write { db in
            let board = try db.insert(Board(name: "Board"))
            return try (1...3).map { try db.insert(Card(title: "C\($0)", points: $0, boardID: board.id)).id }
        }
        try await old.sync.sync()
        try await b.sync.sync()
        // Meanwhile, on the server: B changes the third card.
        try await b.store.write { db in try db.execute(sql: "UPDATE Card SET points = 42 WHERE title = 'C3'") }
        try await b.sync.sync()
        await old.close()

        // The new version opens the file: the store migrates it (Card rebuilt), and the app
        // writes before its sync starts.
        let store = try Store(schema: Self.withColor, path: path)
        #expect(try await store.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'Card' AND name LIKE 'stratasync%'")
        } == [], "the store's migration rebuilt Card: the sync's triggers on it are gone")
        try await store.write { db in
            try db.execute(sql: "UPDATE Card SET color = 'red' WHERE id = ?", arguments: [ids[0]])
            try db.execute(sql: "UPDATE Card SET title = 'Edited, unseen' WHERE id = ?", arguments: [ids[1]])
        }
        try store.close()
        let a = try Device(path, server: try test.server(schema: Self.withColor), schema: Self.withColor)
        defer { Task { await a.close() } }
        try await a.sync.sync()
        try await a.sync.sync()

        #expect(try await test.psql(#"SELECT title || ' ' || points || ' ' || coalesce(color, '-') FROM "Card" ORDER BY title"#)
            == "C1 1 red\nC2 2 grey\nC3 42 grey\n")
        #expect(try await a.store.read { db in
            try String.fetchAll(db, sql: "SELECT title || ' ' || points || ' ' || color FROM Card ORDER BY title")
        } == ["C1 1 red", "C2 2 grey", "C3 42 grey"])
        #expect(try Self.bases(a) == [])
        let server = try await a.server.contents()  // read with the new model, color included
        #expect(try a.sync.contents().difference(from: server) == nil)
        // The rebuilt table has its triggers again: the next edit is seen and pushed.
        try await a.store.write { db in try db.execute(sql: "UPDATE Card SET title = 'Seen' WHERE id = ?", arguments: [ids[1]]) }
        #expect(try Self.bases(a) == ["Card title"])
        try await a.sync.sync()
        try await b.sync.sync()
        #expect(try await b.store.read { db in try String.fetchAll(db, sql: "SELECT title || ' ' || points FROM Card ORDER BY title") }
            == ["C1 1", "C3 42", "Seen 2"])
    }

    /// A store synced by the previous release (the first format: 36-character text ids, a
    /// whole JSON base per object), with a change, a deletion and a new object not pushed
    /// yet, is migrated in place when the sync starts: nothing is lost or sent twice, and it
    /// goes on syncing with a device of this release.
    @Test func aStoreOfTheFirstFormatIsMigratedInPlaceAndKeepsSyncing() async throws {
        let (test, folder) = (try await TestServer(), try TemporaryDirectory())
        let path = folder.path("a.sqlite")
        let previous = try Device(path, test)
        let b = try Device(folder.path("b.sqlite"), test)
        defer { Task { await b.close() } }
        try await previous.store.write { db in
            for index in 0..<4 {
                let board = try db.insert(Board(name: "B\(index)", position: index))
                for number in 0..<3 {
                    let card = try db.insert(Card(title: "C\(index).\(number)", points: number, boardID: board.id))
                    let label = try db.insert(Label(name: "L\(index).\(number)"))
                    try db.link(card.id, Card.labels, label.id)
                }
            }
        }
        try await previous.sync.sync()
        try await b.sync.sync()
        let before = try previous.sync.contents()
        await previous.close()

        // The file as the previous release kept it, then written by that release's app.
        let tables = try SyncedTables(schema: StrataModel.schema, only: nil)
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in try FirstFormat.rewrite(tables, db) }
        try queue.close()
        do {
            let store = try Store(schema: StrataModel.schema, path: path)
            try await store.write { db in
                var card = try #require(try db.fetchAll(Card.self).first { $0.title == "C0.1" })
                card.title = "Edited by the previous release"
                try db.update(card)
                let gone = try #require(try db.fetchAll(Board.self).first { $0.name == "B3" })
                try db.delete(gone)  // and its cards, by the cascade
                let board = try #require(try db.fetchAll(Board.self).first { $0.name == "B1" })
                _ = try db.insert(Card(title: "New in the previous release", boardID: board.id))
            }
            try store.close()
        }
        let firstFormat = try DatabaseQueue(path: path)
        let oldIDs = try firstFormat.read { db in
            try Row.fetchAll(db, sql: "SELECT uuid, deleted, base IS NULL AS new FROM stratasync_objects")
        }
        try firstFormat.close()
        #expect(oldIDs.filter { $0["deleted"] == true }.count == 4)  // B3 and its three cards
        #expect(oldIDs.filter { $0["new"] == true && $0["deleted"] == false }.count == 1)

        // This release opens it.
        let a = try Device(path, test)
        defer { Task { await a.close() } }
        let state = try await a.store.read { db in
            (
                try db.tableExists("stratasync_objects"),
                try String.fetchOne(db, sql: "SELECT value FROM stratasync_state WHERE key = 'format'"),
                try Int.fetchAll(db, sql: "SELECT state FROM stratasync_ids ORDER BY state"),
                try String.fetchAll(db, sql: "SELECT tbl || ' ' || col FROM stratasync_base"),
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM stratasync_links")
            )
        }
        #expect(state.0 == false)
        #expect(state.1 == "2")
        #expect(state.2.filter { $0 == 0 }.count == 1 && state.2.filter { $0 == 2 }.count == 4 && state.2.count == oldIDs.count)
        #expect(state.3 == ["Card title"])
        #expect(state.4 == 12)
        // The same ids as before, as 16 bytes.
        for row in oldIDs where row["deleted"] == false && row["new"] == false {
            let id = try #require(UUID(uuidString: row["uuid"]))
            #expect(try await a.store.read { db in
                try Bool.fetchOne(db, sql: "SELECT 1 FROM stratasync_ids WHERE uuid = ?", arguments: [LocalSyncState.blob(id)])
            } == true)
        }

        let report = try await a.sync.sync()
        #expect(report.pushedChanges == 1 + 4 + 1)  // the edit, the four deletions, the new card
        #expect(report.changesRefusedByServer == 0)
        try await b.sync.sync()
        try await expectConverged([a, b], test)
        let after = try b.sync.contents()
        let titles = Set((after.objects["Card"] ?? [:]).values.compactMap { $0["title"] ?? nil })
        #expect(titles.contains("Edited by the previous release") && titles.contains("New in the previous release"))
        #expect(titles.count == 12 - 3 + 1)
        #expect((after.objects["Board"] ?? [:]).count == (before.objects["Board"] ?? [:]).count - 1)
        // And both go on: a change on B reaches A.
        try await b.store.write { db in
            var board = try #require(try db.fetchAll(Board.self).first { $0.name == "B0" })
            board.name = "B0 renamed on B"
            try db.update(board)
        }
        try await b.sync.sync()
        try await a.sync.sync()
        #expect(try await a.store.read { db in try db.fetchAll(Board.self).map(\.name) }.contains("B0 renamed on B"))
        #expect(try Self.bases(a) == [])
        try await expectConverged([a, b], test)
    }
}

/// The first format of the sync's state, as the previous release wrote it: a reference
/// implementation for the migration test.
enum FirstFormat {
    static let createSQL = [
        """
        CREATE TABLE stratasync_objects (uuid TEXT NOT NULL PRIMARY KEY, tbl TEXT NOT NULL, \
        rowid_ INTEGER NOT NULL, base TEXT, deleted INTEGER NOT NULL DEFAULT 0)
        """,
        "CREATE UNIQUE INDEX stratasync_objects_row ON stratasync_objects (tbl, rowid_) WHERE deleted = 0",
        "CREATE INDEX stratasync_objects_pending ON stratasync_objects (tbl) WHERE base IS NULL OR deleted = 1",
        "CREATE TABLE stratasync_links (tbl TEXT NOT NULL, a TEXT NOT NULL, b TEXT NOT NULL, PRIMARY KEY (tbl, a, b))",
    ]

    static let uuidSQL = """
        (lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) \
        || '-' || substr('89ab', 1 + (random() & 3), 1) || substr(lower(hex(randomblob(2))), 2) || '-' \
        || lower(hex(randomblob(6))))
        """

    static func triggers(for entity: SyncedTables.Entity) -> [String] {
        let table = quoted(entity.name), key = quoted(entity.primaryKey), name = literal(entity.name)
        return [
            """
            CREATE TRIGGER "stratasync_insert_\(entity.name)" AFTER INSERT ON \(table) \
            WHEN (SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM stratasync_objects WHERE tbl = \(name) AND rowid_ = NEW.\(key) AND deleted = 0)) \
            BEGIN INSERT OR IGNORE INTO stratasync_objects (uuid, tbl, rowid_) VALUES (\(uuidSQL), \(name), NEW.\(key)); END
            """,
            """
            CREATE TRIGGER "stratasync_delete_\(entity.name)" AFTER DELETE ON \(table) BEGIN \
            DELETE FROM stratasync_objects WHERE tbl = \(name) AND rowid_ = OLD.\(key) AND deleted = 0 AND base IS NULL; \
            UPDATE stratasync_objects SET deleted = 1 WHERE tbl = \(name) AND rowid_ = OLD.\(key) AND deleted = 0; END
            """,
        ]
    }

    /// Rewrites the sync's state of a file of this release (everything agreed) as the first
    /// format held it: each object's base is its values now, as wire text.
    static func rewrite(_ tables: SyncedTables, _ db: Database) throws {
        let ids = try Row.fetchAll(db, sql: "SELECT uuid, tbl, rowid_, state FROM stratasync_ids")
        let links = try Row.fetchAll(db, sql: "SELECT tbl, a, b FROM stratasync_links")
        let rows = LocalRows(tables: tables)
        var bases: [Data: String] = [:]
        for (table, group) in Dictionary(grouping: ids, by: { $0["tbl"] as String }) {
            let entity = try #require(tables.entity(named: table))
            let values = try rows.values(entity, group.map { $0["rowid_"] }, db)
            for row in group { bases[row["uuid"]] = values[row["rowid_"]].map(LocalSyncState.encode) }
        }
        for name in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'stratasync%'") {
            try db.execute(sql: "DROP TRIGGER \(quoted(name))")
        }
        for table in ["stratasync_ids", "stratasync_base", "stratasync_applying", "stratasync_links"] {
            try db.execute(sql: "DROP TABLE \(table)")
        }
        try db.execute(sql: "DELETE FROM stratasync_state WHERE key = 'format' OR key LIKE 'columns.%'")
        for statement in createSQL { try db.execute(sql: statement) }
        for row in ids {
            let uuid: Data = row["uuid"]
            try db.execute(
                sql: "INSERT INTO stratasync_objects (uuid, tbl, rowid_, base, deleted) VALUES (?, ?, ?, ?, ?)",
                arguments: [LocalSyncState.text(uuid), row["tbl"], row["rowid_"], bases[uuid], (row["state"] as Int) == 2])
        }
        for row in links {
            try db.execute(
                sql: "INSERT INTO stratasync_links (tbl, a, b) VALUES (?, ?, ?)",
                arguments: [row["tbl"], LocalSyncState.text(row["a"]), LocalSyncState.text(row["b"])])
        }
        for entity in tables.entities {
            for statement in triggers(for: entity) { try db.execute(sql: statement) }
        }
    }
}
