import Foundation
import StrataSyncFixture
import StrataTestSupport
import Testing

/// The least-privilege role of the article *Sync through PostgreSQL*: the tables are made by
/// their owner, and devices connect as a role that holds only the documented grants.
@Suite("A least-privilege role")
struct SyncRoleTests {
    /// The grants the article documents, for this model's tables (the article's example is
    /// the Notes model's; the statements are the same with these names).
    static func grants(to role: String) -> String {
        """
        GRANT SELECT, INSERT, UPDATE, DELETE ON "Board", "Card", "Label", "Card_labels" TO \(role);
        GRANT SELECT, INSERT ON strata_sync_log, strata_sync_pushes TO \(role);
        GRANT SELECT ON strata_sync_meta TO \(role);
        GRANT USAGE ON SEQUENCE strata_sync_log_seq_seq TO \(role);
        """
    }

    /// The owner makes the tables, as a deployment's migration would.
    static func makeTables(_ test: TestServer, _ folder: TemporaryDirectory) async throws {
        let owner = try Device(folder.path("owner.sqlite"), test)
        try await owner.sync.sync()
        await owner.close()
    }

    /// A device of its own store connected as `role`, which may not change the tables.
    static func device(_ path: String, role: String, _ test: TestServer) throws -> Device {
        let server = try PostgresSyncServer(
            configuration: test.cluster.configuration(user: role, database: test.database), schema: StrataModel.schema,
            policy: .requireExisting)
        return try Device(path, server: server)
    }

    @Test func devicesSyncAsTheRoleWhichTouchesNothingElse() async throws {
        let test = try TestServer(), folder = try TemporaryDirectory()
        try await Self.makeTables(test, folder)
        // Roles are the cluster's: one name per test database.
        let role = "sync_" + test.database
        try test.psql("""
            CREATE ROLE \(role) LOGIN;
            \(Self.grants(to: role))
            CREATE TABLE private_notes (body text);
            INSERT INTO private_notes VALUES ('not for devices')
            """)

        let a = try Self.device(folder.path("a.sqlite"), role: role, test)
        let b = try Self.device(folder.path("b.sqlite"), role: role, test)
        defer { Task { await a.close(); await b.close() } }
        try await a.store.write { db in
            let inbox = try db.insert(Board(name: "Inbox"))
            let label = try db.insert(Label(name: "urgent"))
            let card = try db.insert(Card(title: "Write the plan", boardID: inbox.id))
            try db.link(card.id, Card.labels, label.id)
        }
        try await settle([a, b])
        try await b.store.write { db in
            try db.execute(sql: "UPDATE Card SET title = 'Plan written'")
            _ = try db.insert(Board(name: "Later"))
        }
        try await a.store.write { db in try db.execute(sql: "DELETE FROM Label") }
        try await settle([a, b])
        try await expectConverged([a, b], test)
        #expect(try await b.store.fetchAll(Card.self).map(\.title) == ["Plan written"])
        #expect(try await a.store.fetchAll(Board.self).map(\.name).sorted() == ["Inbox", "Later"])
        #expect(try await b.store.fetchCount(Label.self) == 0)

        // Nothing outside the synced tables, and no change of their definitions.
        for statement in [
            "SELECT * FROM private_notes",
            "CREATE TABLE devices_table (a int)",
            "DROP TABLE \"Card\"",
            "ALTER TABLE \"Board\" ADD COLUMN extra int",
            "UPDATE strata_sync_meta SET value = 'x'",
            "DELETE FROM strata_sync_log",
            "DELETE FROM strata_sync_pushes",
        ] {
            #expect(throws: (any Error).self, "the role ran: \(statement)") {
                try test.cluster.psql(statement, user: role, database: test.database)
            }
        }
    }

    @Test func aRoleWithoutTheLogSequenceCannotPushAndNothingIsGivenUp() async throws {
        // The grants are what sync needs: without one of them a push fails with the server's
        // permission error, and is sent again later; it is not a refusal, which would give up
        // the device's object.
        let test = try TestServer(), folder = try TemporaryDirectory()
        try await Self.makeTables(test, folder)
        let role = "nosequence_" + test.database
        let grants = Self.grants(to: role).split(separator: "\n").filter { !$0.contains("SEQUENCE") }.joined(separator: "\n")
        try test.psql("CREATE ROLE \(role) LOGIN;\n\(grants)")
        let a = try Self.device(folder.path("a.sqlite"), role: role, test)
        defer { Task { await a.close() } }
        try await a.store.write { db in _ = try db.insert(Board(name: "Inbox")) }
        await #expect(throws: (any Error).self) { try await a.sync.sync() }
        #expect(try await test.contents().objectCount == 0)
        #expect(try await a.store.fetchAll(Board.self).map(\.name) == ["Inbox"])
        #expect(try a.sync.conflicts().isEmpty)
        // Granted, the same push goes through.
        try test.psql("GRANT USAGE ON SEQUENCE strata_sync_log_seq_seq TO \(role)")
        try await a.sync.sync()
        try await expectConverged([a], test)
    }
}
