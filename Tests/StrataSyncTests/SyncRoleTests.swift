import Foundation
import StrataSyncFixture
import StrataTestSupport
import Testing

/// The least-privilege role of the sync article, taken from the article's text: with exactly
/// its GRANTs, devices sync with `.requireExisting`, and the role can touch nothing else.
@Suite("A least-privilege role")
struct SyncRoleTests {
    @Test func aRoleWithTheArticlesGrantsSyncsAndIsRefusedEverythingElse() async throws {
        let test = try await TestServer()
        // The owner (the cluster's superuser) applies the script and keeps a table of its own.
        try await test.psql(try PostgresSchema(schema: StrataModel.schema).sql)
        try await test.psql("CREATE TABLE owner_notes (body text); INSERT INTO owner_notes VALUES ('the owner''s')")
        let role = try await Self.makeRole(test, statements: try Self.articleStatements())

        let failure = try await Self.roundTrip(test, role: role) { a, b in
            try await expectConverged([a, b], test)
        }
        #expect(failure == nil, "\(failure ?? "")")
        let contents = try await test.contents()
        #expect(contents.objects["Board"]?.count == 1)
        #expect(contents.objects["Card"]?.count == 3)
        #expect(contents.objects["Label"]?.count == 1)
        #expect(contents.links["Card_labels"]?.count == 1)

        // Outside the synced tables, and any DDL: PostgreSQL refuses (42501, insufficient privilege).
        let connection = try await PostgresConnection.connect(
            configuration: test.cluster.configuration(user: role, database: test.database), id: 1,
            logger: Logger(label: "strata.tests"))
        let refused = [
            "SELECT * FROM owner_notes",
            "UPDATE owner_notes SET body = 'mine'",
            "CREATE TABLE role_table (x integer)",
            "ALTER TABLE \"Card\" ADD COLUMN extra text",
            "CREATE INDEX ON \"Card\" (title)",
            "DROP TABLE \"Label\"",
            "TRUNCATE \"Card\"",
            "DELETE FROM strata_sync_log",
            "UPDATE strata_sync_pushes SET result = ''",
            "UPDATE strata_sync_meta SET value = gen_random_uuid()::text WHERE key = 'server'",
            "INSERT INTO strata_sync_meta (key, value) VALUES ('model', '{}')",
        ]
        for sql in refused {
            do {
                try await connection.query(PostgresQuery(unsafeSQL: sql), logger: Logger(label: "strata.tests"))
                Issue.record("the role was allowed: \(sql)")
            } catch {
                #expect(Self.sqlState(of: error) == "42501", "\(sql): \(String(reflecting: error))")
            }
        }
        try await connection.close()
        #expect(try await test.psql("SELECT body FROM owner_notes") == "the owner's\n")

        // A device with a newer model may not extend the tables through the role.
        let folder = try TemporaryDirectory()
        let newer = try Device(
            folder.path("newer.sqlite"), test, schema: SyncModelVersionTests.newer, policy: .createAndExtend, user: role)
        do {
            try await newer.sync.sync()
            Issue.record("a newer model extended the server's tables through the role")
        } catch {
            #expect(Self.sqlState(of: error) == "42501", "\(String(reflecting: error))")
        }
        await newer.close()
        #expect(try await test.psql("SELECT count(*) FROM information_schema.columns WHERE table_name = 'Card' AND column_name = 'color'") == "0\n")
    }

    /// Each privilege of each GRANT is needed: without any one of them the same round trip
    /// fails (an error, a refusal, or changes that do not arrive). This is also what makes
    /// the test above able to fail when a GRANT is missing from the article.
    @Test func everyPrivilegeTheArticleGrantsIsNeeded() async throws {
        let statements = try Self.articleStatements()
        var variants: [(missing: String, statements: [String])] = []
        for (index, statement) in statements.enumerated() {
            guard let grant = Grant(statement) else { continue }
            for privilege in grant.privileges {
                var reduced = statements
                let others = grant.privileges.filter { $0 != privilege }
                if others.isEmpty {
                    reduced.remove(at: index)
                } else {
                    reduced[index] = Grant(privileges: others, objects: grant.objects, role: grant.role).statement
                }
                variants.append(("\(privilege) ON \(grant.objects)", reduced))
            }
        }
        #expect(variants.count == 8, "the article's GRANTs changed: \(statements)")
        for variant in variants {
            let test = try await TestServer()
            try await test.psql(try PostgresSchema(schema: StrataModel.schema).sql)
            let role = try await Self.makeRole(test, statements: variant.statements)
            let failure = try await Self.roundTrip(test, role: role)
            #expect(failure != nil, "without \(variant.missing) the round trip still succeeded")
        }
    }

    @Test func aMissingPrivilegeFailsThePushAndGivesUpNothing() async throws {
        // A permission error is not a refusal of the data: the push fails and is sent again
        // later, and the device keeps its object (it is not "refused" and deleted here).
        let test = try await TestServer()
        try await test.psql(try PostgresSchema(schema: StrataModel.schema).sql)
        let role = try await Self.makeRole(test, statements: try Self.articleStatements().filter { !$0.contains("SEQUENCE") })
        let folder = try TemporaryDirectory()
        let a = try Device(folder.path("a.sqlite"), test, policy: .requireExisting, user: role)
        defer { Task { await a.close() } }
        try await a.store.write { db in _ = try db.insert(Board(name: "Inbox")) }
        await #expect(throws: (any Error).self) { try await a.sync.sync() }
        #expect(try await test.contents().objectCount == 0)
        #expect(try await a.store.fetchAll(Board.self).map(\.name) == ["Inbox"])
        #expect(try a.sync.conflicts().isEmpty)
        // Granted, the same push goes through.
        try await test.psql("GRANT USAGE ON SEQUENCE strata_sync_log_seq_seq TO \(role)")
        try await a.sync.sync()
        try await expectConverged([a], test)
    }

    // MARK: - Helpers

    /// The SQL block of the article that makes the role, one statement per element, for the
    /// fixture's model: the example's tables (`Notebook`, `Note`, `Tag`, `Note_tags`) become
    /// the fixture's entity and join tables.
    static func articleStatements() throws -> [String] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let article = try String(
            contentsOf: root.appendingPathComponent("Sources/Strata/Strata.docc/SyncThroughPostgreSQL.md"), encoding: .utf8)
        let blocks = article.components(separatedBy: "```sql\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        guard let block = blocks.first(where: { $0.contains("CREATE ROLE") }) else {
            throw RoleError("the article has no ```sql block with CREATE ROLE")
        }
        let exampleTables = #""Notebook", "Note", "Tag", "Note_tags""#
        guard block.contains(exampleTables) else { throw RoleError("the article's GRANTs do not name \(exampleTables)") }
        var tables = StrataModel.schema.entities.map(\.name)
        for entity in StrataModel.schema.entities {
            for relationship in entity.relationships {
                if case .joinTable(let name, _, _) = relationship.storage, !tables.contains(name) { tables.append(name) }
            }
        }
        let statements = block.replacingOccurrences(of: exampleTables, with: tables.map { "\"\($0)\"" }.joined(separator: ", "))
            .components(separatedBy: ";").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
        guard statements.first?.hasPrefix("CREATE ROLE notes_sync ") == true else {
            throw RoleError("the article's block does not start with CREATE ROLE notes_sync")
        }
        return statements
    }

    /// Runs `statements` (the article's, or some of them) for a new role, and returns its name.
    static func makeRole(_ test: TestServer, statements: [String]) async throws -> String {
        let role = "sync_" + UUID().uuidString.prefix(8).lowercased()
        let script = statements.map { $0.replacingOccurrences(of: "notes_sync", with: role) + ";\n" }.joined()
        try await test.psql(script)
        return role
    }

    /// Two devices sync through `role` with `.requireExisting`: A inserts a board, cards, a
    /// label and a link; B pulls, updates a card, moves the link to another card, deletes a
    /// card; A pulls. Nil when every change arrived with nothing refused; otherwise what
    /// went wrong. `check` runs on the two devices before they close.
    static func roundTrip(
        _ test: TestServer, role: String, check: (Device, Device) async throws -> Void = { _, _ in }
    ) async throws -> String? {
        let folder = try TemporaryDirectory()
        let a = try Device(folder.path("a.sqlite"), test, policy: .requireExisting, user: role)
        let b = try Device(folder.path("b.sqlite"), test, policy: .requireExisting, user: role)
        let failure = await failure(of: a, b, check: check)
        await a.close()
        await b.close()
        return failure
    }

    static func failure(of a: Device, _ b: Device, check: (Device, Device) async throws -> Void) async -> String? {
        do {
            try await a.store.write { db in
                let board = try db.insert(Board(name: "Inbox"))
                let label = try db.insert(Label(name: "urgent"))
                for index in 0..<4 {
                    let card = try db.insert(Card(title: "Card \(index)", points: index, boardID: board.id))
                    if index == 0 { try db.link(card.id, Card.labels, label.id) }
                }
            }
            try await settle([a, b])
            guard try await b.store.fetchCount(Card.self) == 4, try b.sync.contents().links["Card_labels"]?.count == 1 else {
                return "B did not receive A's objects: \(try b.sync.contents())"
            }
            try await b.store.write { db in
                let cards = try db.fetchAll(Card.self, sortedBy: [Card.title.ascending])
                var first = cards[0]
                first.title = "Edited"
                _ = try db.update(first)
                let label = try db.fetchAll(Label.self)[0]
                try db.unlink(first.id, Card.labels, label.id)
                try db.link(cards[1].id, Card.labels, label.id)
                _ = try db.delete(cards[3])
            }
            try await settle([b, a])
            let titles = try await a.store.fetchAll(Card.self, sortedBy: [Card.title.ascending]).map(\.title)
            guard titles == ["Card 1", "Card 2", "Edited"] else { return "A has the cards \(titles)" }
            guard try a.sync.contents().links["Card_labels"]?.count == 1 else { return "A's links differ" }
            let conflicts = try a.sync.conflicts() + b.sync.conflicts()
            guard conflicts.isEmpty else { return "refused: \(conflicts.map(\.reason))" }
            try await check(a, b)
            return nil
        } catch {
            return String(reflecting: error)
        }
    }

    /// The SQLSTATE of a PostgreSQL error.
    static func sqlState(of error: any Error) -> String? {
        (error as? SyncConnectionError)?.sqlState ?? (error as? PSQLError)?.serverInfo?[.sqlState]
    }

    /// `GRANT <privileges> ON <objects> TO <role>`.
    struct Grant {
        var privileges: [String]
        var objects: String
        var role: String

        init(privileges: [String], objects: String, role: String) {
            self.privileges = privileges
            self.objects = objects
            self.role = role
        }

        init?(_ statement: String) {
            guard statement.hasPrefix("GRANT "), let on = statement.range(of: " ON "),
                  let to = statement.range(of: " TO ", range: on.upperBound..<statement.endIndex)
            else { return nil }
            privileges = statement[statement.index(statement.startIndex, offsetBy: 6)..<on.lowerBound]
                .components(separatedBy: ", ")
            objects = String(statement[on.upperBound..<to.lowerBound])
            role = String(statement[to.upperBound...])
        }

        var statement: String { "GRANT \(privileges.joined(separator: ", ")) ON \(objects) TO \(role)" }
    }

    struct RoleError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
